import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import type { AcceptedCharge } from '../../functions/core/charge-decision';
import type { Charge } from '../../functions/core/charges';
import { AgentDisabledError, ConcurrencyError, IdempotencyRecordExistsError, InsufficientFundsError } from '../../functions/core/errors';
import type { IdempotencyWrite } from '../../functions/core/idempotency';
import { newChargeId, newUserId } from '../../functions/core/ids';
import { periodsOf } from '../../functions/core/policy';
import { readAgentLedger } from '../../functions/store/charges/balance.repository';
import { commitCharge, recordFailedCharge } from '../../functions/store/charges/charge.repository';
import type { ChargeWrite } from '../../functions/store/charges/charge-items';
import { getCharge, getChargeById, listCharges } from '../../functions/store/charges/charge-read.repository';
import { payerStateOf } from '../../functions/store/charges/payer';
import { db, dynamoRequestCounts, resetDynamoRequestCounts } from '../../functions/store/client';
import { getIdempotencyRecord } from '../../functions/store/idempotency.repository';
import { createUser, creditUser, getUser } from '../../functions/store/identity/user.repository';
import { keys } from '../../functions/store/table';
import { testAgent, testKeyHash } from '../support/agents';
import { injectFault } from '../support/faults';
import { createTestTable } from '../support/table';

beforeAll(async () => {
  await createTestTable();
  for (const id of [
    'agent-move',
    'agent-poor',
    'agent-failed',
    'agent-replay',
    'agent-expired',
    'agent-conflict',
    'agent-conflict-forever',
    'agent-list',
  ]) {
    await testAgent(id);
  }
});

let n = 0;
async function userWith(usd: number): Promise<string> {
  const id = newUserId();
  await createUser(id, `hash-${id}`, new Date());
  if (usd > 0) {
    await creditUser(
      id,
      { USD: 0, USDC: 0 },
      usd,
      'USD',
      { scope: 'admin#credits', key: `seed-${id}`, record: { fingerprint: 'f', statusCode: 200, body: '{}' } },
      new Date(),
    );
  }
  return id;
}

function charge(agentId: string, userId: string, amount: number): Charge {
  return {
    id: newChargeId(agentId),
    agentId,
    userId,
    idempotencyKey: `key-${++n}`,
    amount,
    currency: 'USD',
    description: 'test',
    status: 'SUCCESS',
    createdAt: new Date().toISOString(),
  };
}

/** What a charge is judged by: the user's item as it is now (no policy), and its account key. */
async function basisFor(userId: string): Promise<Pick<ChargeWrite, 'userKeyHash' | 'payer'>> {
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.user(userId), ConsistentRead: true }));
  return { userKeyHash: `hash-${userId}`, payer: payerStateOf(out.Item ?? {}) };
}

/** A plain charge, accepted (no policy: no limits, SUCCESS at once). */
const accepted: AcceptedCharge = { kind: 'accepted', limits: [], agentCounters: false, needsApproval: false };

const commit = (c: Charge, agentKeyHash: string, basis: Pick<ChargeWrite, 'userKeyHash' | 'payer'>, idem: IdempotencyWrite, now: Date) =>
  commitCharge({ charge: c, decision: accepted, agentKeyHash, ...basis, idem, events: [], now });

const recordFailed = (c: Charge, agentKeyHash: string, idem: IdempotencyWrite, now: Date) =>
  recordFailedCharge({ charge: c, agentKeyHash, idem, now });

const idem = (c: Charge, fingerprint = 'fp') => ({
  scope: `${c.agentId}#charges`,
  key: c.idempotencyKey,
  record: { fingerprint, statusCode: 201, body: JSON.stringify({ id: c.id }) },
});

describe('charge repository against DynamoDB Local', () => {
  it('moves money from the user to one agent shard in one TransactWriteItems', async () => {
    const userId = await userWith(1000);
    const c = charge('agent-move', userId, 250);
    const basis = await basisFor(c.userId);
    resetDynamoRequestCounts();
    const now = new Date();
    await commit(c, testKeyHash(c.agentId), basis, idem(c), now);
    expect(dynamoRequestCounts()).toEqual({ TransactWriteItemsCommand: 1 });
    expect((await getUser(userId))?.balances.USD).toBe(750);
    const ledger = await readAgentLedger('agent-move');
    expect(ledger.balances.USD).toBe(250);
    expect(ledger.charges).toBe(1);
    expect(ledger.shards.filter((s) => s.balances.USD !== 0).map((s) => s.balances.USD)).toEqual([250]);
    // The charge keeps which spend counters it was added to: the user's of today, not the agent's (no agent limits).
    expect(await getCharge('agent-move', c.id)).toEqual({ ...c, counted: { ...periodsOf(now), agent: false } });
    expect(await getIdempotencyRecord(`agent-move#charges`, c.idempotencyKey, new Date())).toEqual(idem(c).record);
  });

  it('the kill switch: refuses a charge (and its FAILED record) once the agent item is disabled, moving nothing', async () => {
    const agent = await testAgent(undefined, false);
    const userId = await userWith(1000);
    const c = charge(agent.id, userId, 100);
    await expect(commit(c, agent.keyHash, await basisFor(c.userId), idem(c), new Date())).rejects.toBeInstanceOf(AgentDisabledError);
    await expect(recordFailed({ ...c, status: 'FAILED' }, agent.keyHash, idem(c), new Date())).rejects.toBeInstanceOf(AgentDisabledError);
    // A rotated key (no agent item under the old hash) is refused the same way.
    await expect(commit(c, 'hash-of-a-rotated-key', await basisFor(c.userId), idem(c), new Date())).rejects.toBeInstanceOf(
      AgentDisabledError,
    );
    expect((await getUser(userId))?.balances.USD).toBe(1000);
    expect(await getCharge(agent.id, c.id)).toBeUndefined();
    expect((await readAgentLedger(agent.id)).charges).toBe(0);
  });

  it('refuses a debit larger than the balance and changes nothing', async () => {
    const userId = await userWith(100);
    const c = charge('agent-poor', userId, 101);
    await expect(commit(c, testKeyHash(c.agentId), await basisFor(c.userId), idem(c), new Date())).rejects.toBeInstanceOf(
      InsufficientFundsError,
    );
    expect((await getUser(userId))?.balances.USD).toBe(100);
    expect(await getCharge('agent-poor', c.id)).toBeUndefined();
    expect(await getIdempotencyRecord('agent-poor#charges', c.idempotencyKey, new Date())).toBeUndefined();
    expect((await readAgentLedger('agent-poor')).balances.USD).toBe(0);
  });

  it('keeps a FAILED charge with its idempotency record and counts it, moving no money', async () => {
    const userId = await userWith(0);
    const c = { ...charge('agent-failed', userId, 500), status: 'FAILED' as const };
    await recordFailed(c, testKeyHash(c.agentId), idem(c), new Date());
    const ledger = await readAgentLedger('agent-failed');
    expect(ledger.charges).toBe(1);
    expect(ledger.balances.USD).toBe(0);
    expect((await getCharge('agent-failed', c.id))?.status).toBe('FAILED');
  });

  it('reports an existing idempotency record with the old item and moves no money', async () => {
    const userId = await userWith(1000);
    const first = charge('agent-replay', userId, 100);
    await commit(first, testKeyHash(first.agentId), await basisFor(first.userId), idem(first, 'same'), new Date());
    const second = { ...charge('agent-replay', userId, 100), idempotencyKey: first.idempotencyKey };
    const error = await commit(second, testKeyHash(second.agentId), await basisFor(second.userId), idem(second, 'same'), new Date()).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(IdempotencyRecordExistsError);
    // DynamoDB hands the old record back with the failed condition (no extra read needed).
    expect((error as IdempotencyRecordExistsError).existing).toEqual(idem(first, 'same').record);
    expect((await getUser(userId))?.balances.USD).toBe(900);
    expect(await getCharge('agent-replay', second.id)).toBeUndefined();
  });

  it('treats an expired idempotency record as absent (TTL deletion lags)', async () => {
    const userId = await userWith(1000);
    const first = charge('agent-expired', userId, 100);
    const longAgo = new Date(Date.now() - 2 * 86_400_000);
    await commit(first, testKeyHash(first.agentId), await basisFor(first.userId), idem(first), longAgo);
    const again = { ...charge('agent-expired', userId, 100), idempotencyKey: first.idempotencyKey };
    await commit(again, testKeyHash(again.agentId), await basisFor(again.userId), idem(again), new Date());
    expect((await getUser(userId))?.balances.USD).toBe(800);
  });

  it('retries TransactionConflict with backoff and then commits once', async () => {
    const userId = await userWith(1000);
    const c = charge('agent-conflict', userId, 100);
    const fault = injectFault('TransactWriteItemsCommand', 'conflict', 3);
    try {
      await commit(c, testKeyHash(c.agentId), await basisFor(c.userId), idem(c), new Date());
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBe(3);
    expect((await getUser(userId))?.balances.USD).toBe(900);
    expect((await readAgentLedger('agent-conflict')).balances.USD).toBe(100);
  });

  it('gives up after TRANSACTION_MAX_ATTEMPTS conflicts with ConcurrencyError and moves nothing', async () => {
    const userId = await userWith(1000);
    const c = charge('agent-conflict-forever', userId, 100);
    const fault = injectFault('TransactWriteItemsCommand', 'conflict', 1000);
    try {
      await expect(commit(c, testKeyHash(c.agentId), await basisFor(c.userId), idem(c), new Date())).rejects.toBeInstanceOf(
        ConcurrencyError,
      );
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBe(6);
    expect((await getUser(userId))?.balances.USD).toBe(1000);
  });

  it('lists newest first, skips by keys, continues after a cursor, and finds any charge by id', async () => {
    const userId = await userWith(10_000);
    const made: Charge[] = [];
    for (let i = 0; i < 7; i++) {
      const c = charge('agent-list', userId, 10 + i);
      await commit(c, testKeyHash(c.agentId), await basisFor(c.userId), idem(c), new Date());
      made.push(c);
    }
    const newestFirst = [...made].reverse().map((c) => c.id);
    const page1 = await listCharges('agent-list', { limit: 3, skip: 0 });
    expect(page1.charges.map((c) => c.id)).toEqual(newestFirst.slice(0, 3));
    const page3 = await listCharges('agent-list', { limit: 3, skip: 6 });
    expect(page3.charges.map((c) => c.id)).toEqual(newestFirst.slice(6));
    const after = await listCharges('agent-list', { limit: 3, skip: 0, after: page1.lastId });
    expect(after.charges.map((c) => c.id)).toEqual(newestFirst.slice(3, 6));
    expect((await listCharges('agent-list', { limit: 3, skip: 7 })).charges).toEqual([]);
    expect((await listCharges('agent-list', { limit: 3, skip: 50 })).charges).toEqual([]);
    expect((await getChargeById(made[2]?.id ?? ''))?.id).toBe(made[2]?.id);
    expect(await getCharge('another-agent', made[2]?.id ?? '')).toBeUndefined();
  });
});
