/**
 * `npm run admin -- --api <url>` against `npm start`'s stack, which takes the admin key
 * (x-admin-key): the commands go over HTTP to the admin API and answer what table mode answers.
 */
import { freePort } from '../../bin/local/local-server';
import { runAdmin } from '../../bin/operator/admin-cli';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack();

/** Runs one command in API mode; `env` stands for the operator's shell (no ADMIN_KEY unless given). */
async function admin(argv: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(argv, { out: (text) => out.push(text), err: (text) => err.push(text) }, env);
  const stdout = out.join('\n');
  return { code, stdout, stderr: err.join('\n'), json: stdout ? (JSON.parse(stdout) as Record<string, unknown>) : undefined };
}
const api = (...argv: string[]) => admin(['--api', t.stack.url, '--admin-key', t.stack.adminKey, ...argv]);

describe('npm run admin -- --api with the admin key', () => {
  it('creates, credits and shows a user through the admin API', async () => {
    const created = await api('create-user');
    expect(created).toMatchObject({
      code: 0,
      stderr: '',
      json: { id: expect.stringMatching(/^u/), userKey: expect.stringMatching(/^uk_live_/) },
    });
    const userId = String(created.json?.id);

    const credited = await api('credit', userId, '12.50', 'USD', '--idempotency-key', 'api-1');
    expect(credited).toMatchObject({ code: 0, stderr: '', json: { id: userId, balances: { USD: 12.5, USDC: 0 } } });
    // A replay answers the first answer and moves nothing; the API's own read agrees.
    expect((await api('credit', userId, '12.50', 'USD', '--idempotency-key', 'api-1')).json).toMatchObject({ balances: { USD: 12.5 } });
    const shown = await api('show-user', userId);
    expect(shown.stdout).toContain('"USD": 12.5');
    const read = await t.call('GET', `/api/v1/admin/users/${userId}`, { headers: t.admin });
    expect(shown.json).toEqual(read.body);

    // Without a key the CLI makes one up and prints it before sending.
    const fresh = await api('credit', userId, '0.000001', 'USDC');
    expect(fresh.code).toBe(0);
    expect(fresh.stderr).toMatch(/^idempotency key: [0-9a-f-]{36} \(retry with --idempotency-key [0-9a-f-]{36}\)$/);
    expect(fresh.stdout).toContain('"USDC": 0.000001');
  });

  it("rotates a locked-out payer's account key: the old key stops, the new one works", async () => {
    const user = await t.fundedUser({ USD: 3 });
    const rotated = await api('rotate-user-key', user.id);
    expect(rotated).toMatchObject({ code: 0, stderr: '', json: { userKey: expect.stringMatching(/^uk_live_/) } });
    const newKey = String(rotated.json?.userKey);
    expect(newKey).not.toBe(user.key);
    // This container forgot the old key at once (the auth cache of other containers: at most 30 s).
    expect((await t.call('GET', '/api/v1/users/me', { headers: { 'x-user-key': user.key } })).status).toBe(401);
    expect((await t.call('GET', '/api/v1/users/me', { headers: { 'x-user-key': newKey } })).body).toMatchObject({ id: user.id });
    // The route itself: the operator only; an unknown user is 404.
    const route = `/api/v1/admin/users/${user.id}/keys/rotate`;
    expect((await t.call('POST', route)).body).toEqual({ error: 'missing x-admin-key header' });
    expect((await t.call('POST', route, { headers: { 'x-user-key': newKey } })).status).toBe(401);
    const again = await t.call<{ userKey: string }>('POST', route, { headers: t.admin });
    expect(again.status).toBe(200);
    expect((await t.call('GET', '/api/v1/users/me', { headers: { 'x-user-key': again.body.userKey } })).status).toBe(200);
    const nobody = await t.call('POST', '/api/v1/admin/users/u01jhx3k6v1f8q2n7c9m4p5r6s7/keys/rotate', { headers: t.admin });
    expect({ status: nobody.status, body: nobody.body }).toEqual({ status: 404, body: { error: 'user not found' } });
    expect(await api('rotate-user-key', 'u-nobody')).toMatchObject({ code: 1, stderr: 'error: user not found' });
  });

  it('enables, disables and shows an agent, and reads its charge', async () => {
    const agent = await t.earningAgent({ USD: '1.25' });
    expect(await api('disable-agent', agent.id)).toMatchObject({ code: 0, json: { id: agent.id, enabled: false } });
    expect(await api('enable-agent', agent.id)).toMatchObject({ code: 0, json: { id: agent.id, enabled: true } });
    expect(await api('show-agent', agent.id)).toMatchObject({
      code: 0,
      json: { id: agent.id, enabled: true, balances: { USD: 1.25, USDC: 0 } },
    });
    const charges = await t.call<{ data: { id: string }[] }>('GET', '/api/v1/agents/charges', { headers: { 'x-agent-key': agent.key } });
    const chargeId = charges.body.data[0]?.id ?? '';
    expect(await api('show-charge', chargeId)).toMatchObject({ code: 0, json: { id: chargeId, amount: 1.25, status: 'SUCCESS' } });
  });

  it('lists the agents waiting to be enabled, as GET /api/v1/admin/agents does, page by page', async () => {
    const waiting: string[] = [];
    for (let i = 0; i < 3; i++) {
      const reg = await t.call<{ agentId: string }>('POST', '/api/v1/agents/register', {
        body: { name: `cli-waiting-${i}-${Date.now()}`, email: 'dev@example.com', website: 'https://example.com' },
      });
      waiting.unshift(reg.body.agentId);
    }
    const enabled = await t.enabledAgent();
    const pending = await api('list-agents', '--pending');
    expect(pending).toMatchObject({ code: 0, stderr: '' });
    const read = await t.call('GET', '/api/v1/admin/agents?enabled=false', { headers: t.admin });
    expect(pending.json).toEqual(read.body);
    const ids = (json: unknown) => (json as { data: { id: string }[] }).data.map((a) => a.id);
    expect(ids(pending.json).slice(0, 3)).toEqual(waiting);
    expect(ids(pending.json)).not.toContain(enabled.id);
    expect(ids((await api('list-agents', '--enabled')).json)).toContain(enabled.id);
    expect(ids((await api('list-agents')).json)).toEqual(expect.arrayContaining([...waiting, enabled.id]));

    // One page at a time: --cursor takes the answer's nextCursor.
    const first = await api('list-agents', '--pending', '--limit', '2');
    expect(ids(first.json)).toEqual(waiting.slice(0, 2));
    const cursor = String((first.json as { nextCursor: string }).nextCursor);
    expect(ids((await api('list-agents', '--pending', '--limit', '2', '--cursor', cursor)).json)[0]).toBe(waiting[2]);
    expect(await api('list-agents', '--enabled', '--cursor', cursor)).toMatchObject({ code: 1, stderr: 'error: cursor is invalid' });
    expect(await api('list-agents', '--limit', '0')).toMatchObject({ code: 1, stderr: 'error: limit must be a positive integer' });
  });

  it('refuses what the API refuses, with the API message and exit 1', async () => {
    const userId = String((await api('create-user')).json?.id);
    expect(await api('credit', userId, '5', 'EUR')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('error: currency must be one of USD, USDC'),
    });
    expect(await api('credit', userId, 'five', 'USD')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('error: amount must be a number'),
    });
    expect(await api('credit', userId, '0.001', 'USD')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('error: amount has more than 2 decimal places for USD'),
    });
    expect(await api('show-user', 'u-nobody')).toMatchObject({ code: 1, stderr: 'error: user not found' });
    expect(await api('show-agent', 'a-nobody')).toMatchObject({ code: 1, stderr: 'error: agent not found' });
    // An id is one path segment, whatever it holds.
    expect(await api('show-user', '../agents/x')).toMatchObject({ code: 1, stderr: 'error: user not found' });
    const wrongKey = await admin(['--api', t.stack.url, '--admin-key', 'wrong-key-but-long-enough', 'create-user']);
    expect(wrongKey).toMatchObject({ code: 1, stderr: 'error: invalid admin key' });
  });

  it('takes the key from ADMIN_KEY when --admin-key is absent, as the README walkthrough exports it', async () => {
    const created = await admin(['--api', t.stack.url, 'create-user'], { ADMIN_KEY: t.stack.adminKey });
    expect(created).toMatchObject({ code: 0, json: { id: expect.stringMatching(/^u/) } });
  });

  it('answers usage errors with exit 2: table-only commands, table flags, a key without --api, no region to sign for', async () => {
    for (const argv of [
      ['--api', t.stack.url, '--admin-key', 'k', 'audit'],
      ['--api', t.stack.url, '--table', 'x', 'create-user'],
      ['--api', t.stack.url, '--local', 'create-user'],
      ['--admin-key', 'k', '--table', 'x', 'create-user'],
      ['--api', 'not a url', '--admin-key', 'k', 'create-user'],
      ['--api', 'ftp://example.com/', '--admin-key', 'k', 'create-user'],
      // No key, so it would sign, but a local URL names no region and the environment none either.
      ['--api', t.stack.url, 'create-user'],
    ]) {
      const result = await admin(argv);
      expect({ argv, code: result.code, usage: result.stderr.includes('usage: npm run admin') }).toEqual({ argv, code: 2, usage: true });
    }
  });

  it('fails with exit 1 and the cause when the API cannot be reached', async () => {
    const closed = await freePort();
    const down = await admin(['--api', `http://127.0.0.1:${closed}/`, '--admin-key', 'k', 'create-user']);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^error: TypeError: fetch failed \(.*ECONNREFUSED/);
  });
});

auditAfterAll();
