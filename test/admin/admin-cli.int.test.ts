/**
 * `npm run admin` against DynamoDB Local, in-process through `runAdmin` (this file's own table,
 * from test/support/env.ts), plus one real process for `--help`, which must need no database.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { PROJECT_ROOT } from '../../bin/local/dynamodb-local';
import { runAdmin } from '../../bin/operator/admin-cli';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { registerAgent } from '../support/answers';
import { createTestTable } from '../support/table';

const run = promisify(execFile);

/** Runs one command; returns its exit code, the parsed JSON answer (if any) and stderr. */
async function admin(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(argv, { out: (t) => out.push(t), err: (t) => err.push(t) });
  const stdout = out.join('\n');
  return { code, stdout, stderr: err.join('\n'), json: stdout ? (JSON.parse(stdout) as Record<string, unknown>) : undefined };
}

async function newUser(): Promise<string> {
  const created = await admin('create-user');
  expect(created.code).toBe(0);
  return String(created.json?.id);
}

beforeAll(async () => {
  await createTestTable();
});

describe('npm run admin', () => {
  it('creates a user, credits it, and shows the credited balance', async () => {
    const created = await admin('create-user');
    expect(created).toMatchObject({ code: 0, stderr: '', json: { id: expect.stringMatching(/^u/), userKey: expect.any(String) } });
    const userId = String(created.json?.id);

    const credited = await admin('credit', userId, '12.50', 'USD', '--idempotency-key', 'cli-test-1');
    expect(credited).toMatchObject({ code: 0, stderr: '', json: { id: userId, balances: { USD: 12.5, USDC: 0 } } });

    const shown = await admin('show-user', userId);
    expect(shown.code).toBe(0);
    // Exact amounts: the JSON text carries the API's literal, not a float's rendering.
    expect(shown.stdout).toContain('"USD": 12.5');
    expect(shown.json).toEqual({ id: userId, balances: { USD: 12.5, USDC: 0 } });
  });

  it('credits once per idempotency key, and makes one up and prints it when none is given', async () => {
    const userId = await newUser();
    await admin('credit', userId, '1', 'USDC', '--idempotency-key', 'same');
    const replay = await admin('credit', userId, '1', 'USDC', '--idempotency-key', 'same');
    expect(replay.json).toMatchObject({ balances: { USDC: 1 } });

    const fresh = await admin('credit', userId, '0.000001', 'USDC');
    expect(fresh.code).toBe(0);
    expect(fresh.stderr).toMatch(/^idempotency key: [0-9a-f-]{36} \(retry with --idempotency-key [0-9a-f-]{36}\)$/);
    expect(fresh.stdout).toContain('"USDC": 1.000001');
  });

  it("rotates a payer's account key on the table", async () => {
    const created = await admin('create-user');
    const userId = String(created.json?.id);
    const rotated = await admin('rotate-user-key', userId);
    expect(rotated).toMatchObject({ code: 0, stderr: '', json: { userKey: expect.stringMatching(/^uk_live_/) } });
    expect(rotated.json?.userKey).not.toBe(created.json?.userKey);
    expect(await admin('rotate-user-key', 'u01jhx3k6v1f8q2n7c9m4p5r6s7')).toMatchObject({ code: 1, stderr: 'error: user not found' });
  });

  it('refuses what the API refuses, with the API message and exit 1', async () => {
    const userId = await newUser();
    expect(await admin('credit', userId, '5', 'EUR')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('error: currency must be one of USD, USDC'),
    });
    expect(await admin('credit', userId, 'five', 'USD')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('error: amount must be a number'),
    });
    expect(await admin('credit', userId, '0.001', 'USD')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('error: amount has more than 2 decimal places for USD'),
    });
    expect(await admin('show-user', 'u-nobody')).toMatchObject({ code: 1, stdout: '', stderr: 'error: user not found' });
    expect(await admin('show-agent', 'a-nobody')).toMatchObject({ code: 1, stderr: 'error: agent not found' });
    expect(await admin('enable-agent', 'a-nobody')).toMatchObject({ code: 1, stderr: 'error: agent not found' });
    expect(await admin('show-charge', 'c-nobody')).toMatchObject({ code: 1, stderr: 'error: charge not found' });

    await admin('credit', userId, '1', 'USD', '--idempotency-key', 'reused');
    expect(await admin('credit', userId, '2', 'USD', '--idempotency-key', 'reused')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('error: idempotency key reused with different request'),
    });
  });

  it('enables and disables an agent, and shows it with its balance', async () => {
    const registered = (await registerAgent({ name: `cli-agent-${Date.now()}`, email: 'a@example.com', website: 'https://example.com' }))
      .body;
    const agentId = String((registered as { agentId: string }).agentId);

    expect(await admin('show-agent', agentId)).toMatchObject({
      code: 0,
      json: { id: agentId, enabled: false, balances: { USD: 0, USDC: 0 } },
    });
    expect(await admin('enable-agent', agentId)).toMatchObject({ code: 0, json: { id: agentId, enabled: true } });
    expect((await admin('show-agent', agentId)).json).toMatchObject({ enabled: true });
    expect(await admin('disable-agent', agentId)).toMatchObject({ code: 0, json: { id: agentId, enabled: false } });
  });

  it('lists agents by state on the table, as the admin API does', async () => {
    const register = async (name: string) =>
      String(((await registerAgent({ name, email: 'a@example.com', website: 'https://example.com' })).body as { agentId: string }).agentId);
    const older = await register(`cli-list-a-${Date.now()}`);
    const newer = await register(`cli-list-b-${Date.now()}`);
    const ids = (json: unknown) => (json as { data: { id: string }[] }).data.map((a) => a.id);
    const pending = await admin('list-agents', '--pending');
    expect(pending).toMatchObject({ code: 0, stderr: '', json: { nextCursor: null } });
    expect(ids(pending.json).slice(0, 2)).toEqual([newer, older]);
    expect(await admin('enable-agent', older)).toMatchObject({ code: 0 });
    expect(ids((await admin('list-agents', '--pending')).json)).not.toContain(older);
    expect(ids((await admin('list-agents', '--enabled')).json)).toContain(older);
    const page = await admin('list-agents', '--limit', '1');
    expect(ids(page.json)).toEqual([newer]);
    const next = await admin('list-agents', '--cursor', String((page.json as { nextCursor: string }).nextCursor));
    expect(ids(next.json)[0]).toBe(older);
    expect(await admin('list-agents', '--limit', '101')).toMatchObject({ code: 1, stderr: 'error: limit must be at most 100' });
  });

  it("deals with a disabled agent's money on the table: held payouts, release, cancel, refunds, return-earnings", async () => {
    const registered = (await registerAgent({ name: `cli-money-${Date.now()}`, email: 'a@example.com', website: 'https://example.com' }))
      .body as { agentId: string };
    const agentId = registered.agentId;
    const listed = await admin('held-payouts');
    expect(listed).toMatchObject({ code: 0, json: { payouts: expect.any(Array), nextCursor: null } });
    const payoutId = 'p01jhx3k6v1f8q2n7c9m4p5r6s7';
    expect(await admin('release-payout', agentId, payoutId)).toMatchObject({ code: 1, stderr: 'error: payout not found' });
    const cancel = await admin('cancel-payout', agentId, payoutId);
    expect(cancel.code).toBe(1);
    // The key is printed before the call, as for a credit: a lost answer is retried with it.
    expect(cancel.stderr).toMatch(
      /^idempotency key: [0-9a-f-]{36} \(retry with --idempotency-key [0-9a-f-]{36}\)\nerror: payout not found$/,
    );
    expect(await admin('refund-charge', agentId, 'c01jhx3k6v1f8q2n7c9m4p5r6s7', '1.5', '--idempotency-key', 'cli-refund')).toMatchObject({
      code: 1,
      stderr: 'error: charge not found',
    });
    expect(
      await admin('refund-charge', agentId, 'c01jhx3k6v1f8q2n7c9m4p5r6s7', '0.001', '--idempotency-key', 'cli-refund-2'),
    ).toMatchObject({
      code: 1,
      stderr: 'error: charge not found',
    });
    // An agent with no charges: nothing to return; an unknown agent: the API's 404.
    expect(await admin('return-earnings', agentId)).toMatchObject({ code: 0, json: { agentId, returned: [], refused: [] } });
    expect(await admin('return-earnings', 'a01jhx3k6v1f8q2n7c9m4p5r6s7')).toMatchObject({ code: 1, stderr: 'error: agent not found' });
  });

  it('audits the table: exit 0 when the ledger holds, exit 1 naming the difference when it does not', async () => {
    expect(await admin('audit')).toMatchObject({ code: 0, stderr: '', json: { ok: true, problems: [] } });

    const userId = await newUser();
    const addUsd = (delta: number) =>
      db().send(
        new UpdateCommand({
          TableName: config().TABLE_NAME,
          Key: keys.user(userId),
          UpdateExpression: 'ADD USD :d',
          ExpressionAttributeValues: { ':d': delta },
        }),
      );
    await addUsd(3);
    try {
      const broken = await admin('audit');
      expect(broken).toMatchObject({ code: 1, json: { ok: false } });
      expect(broken.stderr).toMatch(/^error: ledger audit failed: USD: credited .* difference -0\.03 USD/);
    } finally {
      await addUsd(-3);
    }
  });

  it('resolve-purchase names the chain settings it needs when the environment has none', async () => {
    const resolved = await admin('resolve-purchase', 'xp01jhx3k6v1f8q2n7c9m4p5r6s7a01jhx3k6v1f8q2n7c9m4p5r6s7');
    expect(resolved.code).toBe(1);
    expect(resolved.stderr).toMatch(/^error: NoChainError: no chain configured: set SOLANA_RPC_URL \(or SOLANA_RPC_URL_SECRET_ARN\)/);
  });

  it('answers usage errors with exit 2 and the usage text', async () => {
    for (const argv of [
      [],
      ['frobnicate'],
      ['show-user'],
      ['credit', 'u1', '1'],
      ['show-user', 'u1', '--bogus'],
      ['audit', '--idempotency-key', 'k'],
      ['show-user', 'u1', '--pending'],
      ['list-agents', '--pending', '--enabled'],
      ['list-agents', 'extra'],
      ['release-payout', 'a1', 'p1', '--idempotency-key', 'k'],
      ['refund-charge', 'a1'],
      ['refund-charge', 'a1', 'c1', '1', 'extra'],
      ['return-earnings'],
    ]) {
      const result = await admin(...argv);
      expect({ argv, code: result.code, usage: result.stderr.includes('usage: npm run admin') }).toEqual({ argv, code: 2, usage: true });
    }
  });

  it('`npm run admin -- --help` runs with no table and no database', async () => {
    const env = { ...process.env };
    delete env.TABLE_NAME;
    delete env.DYNAMODB_ENDPOINT;
    const { stdout, stderr } = await run(
      process.execPath,
      [join(PROJECT_ROOT, 'node_modules/tsx/dist/cli.mjs'), 'bin/admin.ts', '--help'],
      {
        cwd: PROJECT_ROOT,
        env,
      },
    );
    expect(stdout).toContain('usage: npm run admin -- <command>');
    expect(stdout).toContain('credit <userId> <amount> <currency>');
    expect(stdout).toContain('--api <baseUrl>');
    expect(stderr).toBe('');
  });
});
