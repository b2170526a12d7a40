/**
 * The audit is only worth running if it fails when money appears or vanishes. Real money
 * movements (through the use cases) must keep it balanced; every kind of tampering with the
 * stored items must make it fail and name the difference; `npm run audit` must exit non-zero.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { PROJECT_ROOT } from '../../bin/local/dynamodb-local';
import { auditLedger, formatAuditReport, runLedgerAudit } from '../../functions/audit/ledger-audit';
import { config } from '../../functions/config';
import { platformFee } from '../../functions/core/fees';
import { newPayoutId } from '../../functions/core/ids';
import { hashKey } from '../../functions/core/keys';
import { scanLedgerItems } from '../../functions/store/audit/audit.repository';
import { shardDebit } from '../../functions/store/charges/balance.repository';
import { db } from '../../functions/store/client';
import { replacePolicy } from '../../functions/store/identity/user.repository';
import { keys } from '../../functions/store/table';
import { transactWrite } from '../../functions/store/transact';
import { expireDueCharges } from '../../functions/use-cases/charges/expiry';
import { updateAgentEnabled } from '../../functions/use-cases/identity/agents';
import { declineCharge } from '../../functions/use-cases/identity/payers';
import { createCharge, createUserWithKey, creditUserBalance, registerAgent } from '../support/answers';
import { createTestTable } from '../support/table';

const run = promisify(execFile);
const table = () => config().TABLE_NAME;

let userId = '';
let agentId = '';
let payer = { userId: '', userKeyHash: '', baseUrl: '' };
let agent = { id: '', keyHash: '' };

beforeAll(async () => {
  await createTestTable();
  const user = (await createUserWithKey()).body as { id: string; userKey: string };
  userId = user.id;
  payer = { userId, userKeyHash: hashKey(user.userKey), baseUrl: 'http://127.0.0.1' };
  await creditUserBalance({ userId, idempotencyKey: 'c1', amount: 50_00, currency: 'USD' });
  await creditUserBalance({ userId, idempotencyKey: 'c2', amount: 20_000_001, currency: 'USDC' });
  const registered = (await registerAgent({ name: 'auditee', email: 'a@example.com', website: 'https://example.com' })).body as {
    agentId: string;
    apiKey: string;
  };
  agentId = registered.agentId;
  agent = { id: agentId, keyHash: hashKey(registered.apiKey) };
  await updateAgentEnabled(agentId, true);
  for (const [i, amount] of [10_01, 99, 100_00].entries()) {
    // The third one is refused for funds and kept as FAILED: it moves nothing.
    await createCharge({ agent, ...payer, idempotencyKey: `k${i}`, amount, currency: 'USD', description: 'd' });
  }
  await createCharge({ agent, ...payer, idempotencyKey: 'u1', amount: 5_000_001, currency: 'USDC', description: 'd' });
});

/** Applies a change, audits, and always undoes the change so tests stay independent. */
async function whileTampered(change: () => Promise<void>, undo: () => Promise<void>) {
  await change();
  try {
    return await runLedgerAudit();
  } finally {
    await undo();
  }
}

const addToUser = (currency: string, delta: number) =>
  db().send(
    new UpdateCommand({
      TableName: table(),
      Key: keys.user(userId),
      UpdateExpression: 'ADD #c :d',
      ExpressionAttributeNames: { '#c': currency },
      ExpressionAttributeValues: { ':d': delta },
    }),
  );

/** A payout written the way a withdrawal writes one: the shard debited by gross in the same transaction. */
async function payout(status: string, gross: number, overrides: Record<string, unknown> = {}): Promise<() => Promise<void>> {
  const id = newPayoutId();
  const { fee, net } = platformFee(gross);
  const ledger = (await scanLedgerItems()).agentShards.find((s) => s.agentId === agentId && Number(s.USD) >= gross);
  if (!ledger) throw new Error('no shard holds enough for the test payout');
  const shard = Number(String(ledger.PK).split('#').pop());
  const refunded = status === 'FAILED';
  const inFlight = status === 'PENDING' || status === 'PROCESSING';
  const lock = {
    Put: { TableName: table(), Item: { ...keys.payoutLock(agentId, 'USD'), type: 'PayoutLock', agentId, currency: 'USD', payoutId: id } },
  };
  await transactWrite([
    ...(refunded ? [] : [shardDebit(agentId, shard, 'USD', gross)]),
    ...(inFlight ? [lock] : []),
    {
      Put: {
        TableName: table(),
        Item: {
          ...keys.payout(agentId, id),
          type: 'Payout',
          agentId,
          currency: 'USD',
          status,
          amount: gross,
          fee,
          netAmount: net,
          ...overrides,
        },
      },
    },
  ]);
  return async () => {
    await transactWrite([
      ...(refunded
        ? []
        : [
            {
              Update: {
                TableName: table(),
                Key: keys.agentBalanceShard(agentId, shard),
                UpdateExpression: 'ADD USD :g',
                ExpressionAttributeValues: { ':g': gross },
              },
            },
          ]),
      { Delete: { TableName: table(), Key: keys.payout(agentId, id) } },
    ]);
    if (inFlight) await db().send(new DeleteCommand({ TableName: table(), Key: keys.payoutLock(agentId, 'USD') }));
  };
}

describe('ledger audit', () => {
  it('holds after real credits and charges, with exact per-currency totals', async () => {
    const report = await runLedgerAudit();
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.currencies.USD).toMatchObject({ credited: 5000, userBalances: 5000 - 1100, agentBalances: 1100, difference: 0 });
    expect(report.currencies.USDC).toMatchObject({
      credited: 20_000_001,
      userBalances: 15_000_000,
      agentBalances: 5_000_001,
      difference: 0,
    });
    expect(report.counts).toMatchObject({ users: 1, agents: 1, credits: 2, charges: 4 });
  });

  it('names the currency and the difference when a user balance grows from nowhere', async () => {
    const report = await whileTampered(
      () => addToUser('USD', 1).then(() => undefined),
      () => addToUser('USD', -1).then(() => undefined),
    );
    expect(report.ok).toBe(false);
    expect(report.currencies.USD.difference).toBe(-1);
    expect(report.currencies.USDC.difference).toBe(0);
    expect(report.userMismatches).toEqual([{ userId, currency: 'USD', credited: 5000, charged: 1100, balance: 3901, difference: -1 }]);
    expect(report.problems[0]).toContain('USD: credited 50 but accounted for 50.01 — difference -0.01 USD');
    expect(formatAuditReport(report)).toContain('DOES NOT HOLD');
  });

  it('fails when an agent shard loses money, naming the agent', async () => {
    const shardItem = (await scanLedgerItems()).agentShards.find((s) => Number(s.USDC) > 0);
    if (!shardItem) throw new Error('no USDC shard');
    const key = { PK: shardItem.PK, SK: shardItem.SK };
    const shift = (d: number) =>
      db()
        .send(new UpdateCommand({ TableName: table(), Key: key, UpdateExpression: 'ADD USDC :d', ExpressionAttributeValues: { ':d': d } }))
        .then(() => undefined);
    const report = await whileTampered(
      () => shift(-1),
      () => shift(1),
    );
    expect(report.currencies.USDC.difference).toBe(1);
    expect(report.agentMismatches).toEqual([
      { agentId, currency: 'USDC', successCharges: 5_000_001, shardBalance: 5_000_000, payoutsGross: 0, difference: 1 },
    ]);
  });

  it('fails when a credit record disappears (money in without a trace)', async () => {
    const credit = (await scanLedgerItems()).credits.find((c) => c.currency === 'USD');
    if (!credit) throw new Error('no credit');
    const report = await whileTampered(
      () =>
        db()
          .send(new DeleteCommand({ TableName: table(), Key: { PK: credit.PK, SK: credit.SK } }))
          .then(() => undefined),
      () =>
        db()
          .send(new PutCommand({ TableName: table(), Item: credit }))
          .then(() => undefined),
    );
    expect(report.currencies.USD.difference).toBe(-5000);
  });

  it('fails when a SUCCESS charge has no matching earnings (status flipped without moving money)', async () => {
    const failed = (await scanLedgerItems()).charges.find((c) => c.status === 'FAILED');
    if (!failed) throw new Error('no failed charge');
    const setStatus = (status: string) =>
      db()
        .send(
          new UpdateCommand({
            TableName: table(),
            Key: { PK: failed.PK, SK: failed.SK },
            UpdateExpression: 'SET #s = :s',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':s': status },
          }),
        )
        .then(() => undefined);
    const report = await whileTampered(
      () => setStatus('SUCCESS'),
      () => setStatus('FAILED'),
    );
    // The invariant itself still holds (no money moved); the cross-checks catch the lie.
    expect(report.currencies.USD.difference).toBe(0);
    expect(report.ok).toBe(false);
    expect(report.agentMismatches[0]).toMatchObject({ agentId, currency: 'USD', difference: 10_000 });
    expect(report.userMismatches[0]).toMatchObject({ userId, currency: 'USD', difference: -10_000 });
  });

  it('counts in-flight payouts at gross, completed at net + fee, failed ones not at all', async () => {
    for (const status of ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED']) {
      const undo = await payout(status, 1001);
      try {
        const report = await runLedgerAudit();
        expect({ status, problems: report.problems }).toEqual({ status, problems: [] });
        const usd = report.currencies.USD;
        if (status === 'COMPLETED') expect([usd.payoutsPaidNet, usd.platformFees, usd.inFlightGross]).toEqual([971, 30, 0]);
        else if (status === 'FAILED') expect([usd.payoutsPaidNet, usd.platformFees, usd.inFlightGross]).toEqual([0, 0, 0]);
        else expect([usd.payoutsPaidNet, usd.platformFees, usd.inFlightGross]).toEqual([0, 0, 1001]);
      } finally {
        await undo();
      }
    }
  });

  it('fails on a payout whose fee is not 3% half up, and on two payouts in flight at once', async () => {
    const undoWrongFee = await payout('COMPLETED', 1001, { fee: 31, netAmount: 970 });
    try {
      const report = await runLedgerAudit();
      expect(report.problems.join('\n')).toContain('should split into fee 0.3 + net 9.71, found fee 0.31 + net 9.7');
    } finally {
      await undoWrongFee();
    }
    const undoA = await payout('PENDING', 100);
    const undoB = await payout('PROCESSING', 100);
    try {
      const report = await runLedgerAudit();
      expect(report.currencies.USD.difference).toBe(0);
      expect(report.problems.join('\n')).toMatch(/2 payouts in flight at once/);
    } finally {
      await undoA();
      await undoB();
    }
  });

  it('fails on a payout lock that outlived its payout, and on an in-flight payout without a lock', async () => {
    const undo = await payout('COMPLETED', 500);
    const lockKey = keys.payoutLock(agentId, 'USD');
    try {
      const completed = (await scanLedgerItems()).payouts[0];
      await db().send(
        new PutCommand({ TableName: table(), Item: { ...lockKey, type: 'PayoutLock', agentId, currency: 'USD', payoutId: completed?.SK } }),
      );
      const stuck = await runLedgerAudit();
      expect(stuck.currencies.USD.difference).toBe(0);
      expect(stuck.problems).toEqual([expect.stringContaining('which is not in flight (a stuck lock blocks every withdrawal)')]);
    } finally {
      await db().send(new DeleteCommand({ TableName: table(), Key: lockKey }));
      await undo();
    }
    const undoPending = await payout('PENDING', 500);
    try {
      await db().send(new DeleteCommand({ TableName: table(), Key: lockKey }));
      const unlocked = await runLedgerAudit();
      expect(unlocked.problems).toEqual([expect.stringContaining('in flight without the payout lock')]);
    } finally {
      await undoPending();
    }
  });

  it('a FAILED payout that was never refunded shows up as missing money', () => {
    const report = auditLedger({
      users: [],
      agentShards: [{ PK: 'AGENTBAL#a1#0', SK: 'BAL', agentId: 'a1', USD: 0 }],
      credits: [{ PK: 'CREDITS#u1', SK: '1', userId: 'u1', currency: 'USD', amount: 1000 }],
      charges: [{ PK: 'CHARGES#a1', SK: 'c1', agentId: 'a1', userId: 'u1', currency: 'USD', amount: 1000, status: 'SUCCESS' }],
      payouts: [{ PK: 'PAYOUTS#a1', SK: 'p1', agentId: 'a1', currency: 'USD', status: 'FAILED', amount: 1000, fee: 30, netAmount: 970 }],
      payoutLocks: [],
    });
    expect(report.ok).toBe(false);
    expect(report.currencies.USD.difference).toBe(1000);
    expect(report.agentMismatches).toEqual([
      { agentId: 'a1', currency: 'USD', successCharges: 1000, shardBalance: 0, payoutsGross: 0, difference: 1000 },
    ]);
  });

  it('`npm run audit` exits 0 when the ledger holds and 1, naming the difference, when it does not', async () => {
    const cli = (extra: string[] = []) =>
      run(process.execPath, [join(PROJECT_ROOT, 'node_modules/tsx/dist/cli.mjs'), 'bin/audit.ts', ...extra], {
        cwd: PROJECT_ROOT,
        env: { ...process.env, TABLE_NAME: table(), DYNAMODB_ENDPOINT: config().DYNAMODB_ENDPOINT ?? '' },
      }).then(
        (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
      );
    const good = await cli();
    expect(good.code).toBe(0);
    expect(good.stdout).toContain('ledger audit: HOLDS');

    await addToUser('USDC', 7);
    try {
      const bad = await cli();
      expect(bad.code).toBe(1);
      expect(bad.stdout).toContain('✗ difference -0.000007');
      expect(bad.stderr).toContain('USDC: credited 20.000001 but accounted for 20.000008');
      const json = await cli(['--json']);
      expect(JSON.parse(json.stdout).currencies.USDC.difference).toBe(-7);
    } finally {
      await addToUser('USDC', -7);
    }
  });

  it('counts held money once, from PENDING charges; a held attribute that drifts, or a hold never returned, is named', async () => {
    // A policy that sends charges above 1 USD to the user for approval (60 s window, so the
    // sweeper can expire them here). The 202 moves 2 USD from the balance to heldUSD.
    await replacePolicy(userId, { approvalAbove: { USD: 1_00 }, approvalWindowSeconds: 60 });
    const pend = async (key: string) => {
      const res = await createCharge({ agent, ...payer, idempotencyKey: key, amount: 2_00, currency: 'USD', description: 'held' });
      expect(res.statusCode).toBe(202);
      return (JSON.parse(res.rawBody ?? '{}') as { id: string }).id;
    };
    const chargeId = await pend('held-1');
    const held = await runLedgerAudit();
    expect(held.problems).toEqual([]);
    expect(held.currencies.USD).toMatchObject({ userBalances: 5000 - 1100 - 200, held: 200, difference: 0 });

    const shiftHeld = (d: number) =>
      db()
        .send(
          new UpdateCommand({
            TableName: table(),
            Key: keys.user(userId),
            UpdateExpression: 'ADD heldUSD :d',
            ExpressionAttributeValues: { ':d': d },
          }),
        )
        .then(() => undefined);
    const drifted = await whileTampered(
      () => shiftHeld(1),
      () => shiftHeld(-1),
    );
    expect(drifted.ok).toBe(false);
    // The total counts the charge, not the attribute: it still balances; the per-user check names it.
    expect(drifted.currencies.USD.difference).toBe(0);
    expect(drifted.heldMismatches).toEqual([{ userId, currency: 'USD', heldOnItem: 201, pendingCharges: 200, difference: 1 }]);
    expect(drifted.problems).toEqual([`user ${userId} USD: held 2.01 on the user item ≠ PENDING charges 2 — difference 0.01`]);

    const setStatus = (status: string) =>
      db()
        .send(
          new UpdateCommand({
            TableName: table(),
            Key: keys.charge(agentId, chargeId),
            UpdateExpression: 'SET #s = :s',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':s': status },
          }),
        )
        .then(() => undefined);
    const neverReturned = await whileTampered(
      () => setStatus('EXPIRED'),
      () => setStatus('PENDING'),
    );
    expect(neverReturned.currencies.USD.difference).toBe(200);
    expect(neverReturned.heldMismatches).toEqual([{ userId, currency: 'USD', heldOnItem: 200, pendingCharges: 0, difference: 200 }]);
    expect(neverReturned.userMismatches).toEqual([expect.objectContaining({ userId, currency: 'USD', difference: 200 })]);

    // Decline and expiry give the hold back: the audit holds with nothing held.
    expect((await declineCharge(userId, chargeId)).status).toBe('FAILED');
    await pend('held-2');
    const sweptAt = new Date(Date.now() + 61_000);
    const swept = await expireDueCharges(sweptAt);
    expect(swept.expired).toBe(1);
    // The sweeper's lag (its SweeperLagSeconds gauge): how late the oldest due charge was; none once swept.
    expect(swept.lagSeconds).toBeGreaterThan(0);
    expect(swept.lagSeconds).toBeLessThanOrEqual(61);
    expect((await expireDueCharges(sweptAt)).lagSeconds).toBe(0);
    const after = await runLedgerAudit();
    expect(after.problems).toEqual([]);
    expect(after.currencies.USD).toMatchObject({ userBalances: 5000 - 1100, held: 0, difference: 0 });
    await replacePolicy(userId, {});
  });
});
