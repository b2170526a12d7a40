/**
 * One agent's charges over its sharded partitions (DESIGN §18): the v1 listing contract (`page`,
 * `limit`, `total`, `totalPages`, newest first, `nextCursor`) holds over the merge, at one Query per
 * partition per page, and a charge written before the sharding (the agent's legacy partition) is
 * listed, read, refunded, captured and released where it is.
 */
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import { CHARGE_SHARDS, INDEX_PARTITIONS, keys } from '../../functions/store/table';
import { auditAfterAll } from '../support/audit';
import { startTestStack, type TestStack } from '../support/stack';
import { createTestTable } from '../support/table';
import { recordTableRequests, type TableRequest } from '../support/table-access';

let t: TestStack;
beforeAll(async () => {
  await createTestTable();
  t = await startTestStack();
});
afterAll(async () => t.stack.stop());
auditAfterAll();

type Charge = { id: string; status: string; amount: number; pendingReason: string | null; refundedAmount: number };
type Page = {
  data: Charge[];
  pagination: { total: number; page: number; limit: number; totalPages: number };
  nextCursor: string | null;
};

const table = () => config().TABLE_NAME;

async function charge(agentKey: string, userKey: string, key: string, extra: Record<string, unknown> = {}): Promise<Charge> {
  const res = await t.call<Charge>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': key },
    body: { amount: 1, currency: 'USD', ...extra },
  });
  if (res.status !== 201) throw new Error(`charge: ${res.status} ${res.text}`);
  return res.body;
}

/** Moves a charge's item to the agent's unsharded partition, as if written before the sharding. */
async function moveToLegacy(agentId: string, chargeId: string): Promise<void> {
  const from = keys.charge(agentId, chargeId);
  const item = (await db().send(new GetCommand({ TableName: table(), Key: from, ConsistentRead: true }))).Item;
  if (!item) throw new Error(`no charge ${chargeId}`);
  await db().send(new PutCommand({ TableName: table(), Item: { ...item, ...keys.legacyCharge(agentId, chargeId) } }));
  await db().send(new DeleteCommand({ TableName: table(), Key: from }));
}

/** The Query requests list-charges sends while `run` runs (each partition once at most). */
async function queriesOf(run: () => Promise<unknown>): Promise<TableRequest[]> {
  const seen: TableRequest[] = [];
  const stop = recordTableRequests((r) => {
    if (r.fn === 'list-charges') seen.push(r);
  });
  try {
    await run();
  } finally {
    stop();
  }
  return seen;
}

describe("an agent's charges over its shards", () => {
  const COUNT = 75;
  const LIMIT = 7;
  let agent: { key: string; id: string };
  let newestFirst: string[];
  let legacyId: string;

  beforeAll(async () => {
    agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 1000 });
    const ids: string[] = [];
    // In order (ids are monotonic only within one process anyway): 8 at a time keeps it quick.
    for (let i = 0; i < COUNT; i += 8) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(8, COUNT - i) }, (_, j) => charge(agent.key, user.key, `sh-${i + j}`).then((c) => c.id)),
      );
      ids.push(...batch);
    }
    newestFirst = [...ids].sort().reverse();
    // One from the middle of the order sits where charges were before the sharding.
    legacyId = newestFirst[30] as string;
    await moveToLegacy(agent.id, legacyId);
  });

  it('spreads them over the shards by id', async () => {
    const byPartition = new Map<string, number>();
    for (const id of newestFirst.filter((id) => id !== legacyId)) {
      const pk = keys.charge(agent.id, id).PK;
      byPartition.set(pk, (byPartition.get(pk) ?? 0) + 1);
    }
    // 74 ids over 32 shards: about 29 partitions written (the distribution itself: test/store/table-keys.test.ts).
    expect(byPartition.size).toBeGreaterThanOrEqual(16);
    for (const pk of byPartition.keys()) expect(keys.chargePartitions(agent.id)).toContain(pk);
  });

  it('pages 1..N by number give exactly the newest-first order: no gap, no duplicate; total and totalPages right', async () => {
    const h = { 'x-agent-key': agent.key };
    const totalPages = Math.ceil(COUNT / LIMIT);
    const seen: string[] = [];
    for (let page = 1; page <= totalPages + 1; page++) {
      const res = await t.call<Page>('GET', `/api/v1/agents/charges?limit=${LIMIT}&page=${page}`, { headers: h });
      expect(res.status).toBe(200);
      expect(res.body.pagination).toEqual({ total: COUNT, page, limit: LIMIT, totalPages });
      expect(res.body.data.map((c) => c.id)).toEqual(newestFirst.slice((page - 1) * LIMIT, page * LIMIT));
      expect(res.body.nextCursor === null).toBe(page >= totalPages);
      seen.push(...res.body.data.map((c) => c.id));
    }
    expect(seen).toEqual(newestFirst);
  });

  it('the cursor walk gives the same order, and a charge made between pages is not in it (as before the sharding)', async () => {
    const h = { 'x-agent-key': agent.key };
    const seen: string[] = [];
    let cursor: string | null = null;
    let page = 0;
    let made: Charge | undefined;
    do {
      const path: string = `/api/v1/agents/charges?limit=${LIMIT}${cursor ? `&cursor=${cursor}` : ''}`;
      const res: Awaited<ReturnType<typeof t.call<Page>>> = await t.call<Page>('GET', path, { headers: h });
      expect(res.status).toBe(200);
      expect(res.body.pagination.page).toBe(++page);
      seen.push(...res.body.data.map((c) => c.id));
      cursor = res.body.nextCursor;
      if (page === 2 && !made) made = await charge(agent.key, (await t.fundedUser({ USD: 5 })).key, 'between');
    } while (cursor);
    expect(seen).toEqual(newestFirst);
    // The new one is the newest: first on page 1, and counted.
    const first = await t.call<Page>('GET', `/api/v1/agents/charges?limit=${LIMIT}`, { headers: h });
    expect(first.body.data[0]?.id).toBe(made?.id);
    expect(first.body.pagination.total).toBe(COUNT + 1);
    newestFirst.unshift(made?.id as string);
  });

  it('reads each partition at most once a page: one Query per shard and the legacy one, one BatchGetItem deeper', async () => {
    const h = { 'x-agent-key': agent.key };
    const partitions = keys.chargePartitions(agent.id);
    expect(partitions).toHaveLength(CHARGE_SHARDS + 1);
    const cases = [`limit=${LIMIT}`, `limit=${LIMIT}&page=4`, `limit=${LIMIT}&page=11`];
    for (const query of cases) {
      const requests = await queriesOf(() => t.call('GET', `/api/v1/agents/charges?${query}`, { headers: h }));
      const queries = requests.filter((r) => r.action === 'dynamodb:Query');
      const queried = queries.flatMap((r) => r.leadingKeys);
      expect([query, queries.length]).toEqual([query, partitions.length]);
      expect(new Set(queried)).toEqual(new Set(partitions));
      // The balance shards (total), and for a deeper page the page's charges.
      const batches = requests.filter((r) => r.action === 'dynamodb:BatchGetItem');
      expect([query, batches.length]).toEqual([query, query.includes('page=') ? 2 : 1]);
    }
    const first = await t.call<Page>('GET', `/api/v1/agents/charges?limit=${LIMIT}`, { headers: h });
    const byCursor = await queriesOf(() => t.call('GET', `/api/v1/agents/charges?cursor=${first.body.nextCursor}`, { headers: h }));
    expect(byCursor.filter((r) => r.action === 'dynamodb:Query')).toHaveLength(partitions.length);
  });

  it('reads and refunds a legacy-partition charge where it is, by id and in its listing', async () => {
    const h = { 'x-agent-key': agent.key };
    const got = await t.call<Charge>('GET', `/api/v1/agents/charge/${legacyId}`, { headers: h });
    expect([got.status, got.body.id]).toEqual([200, legacyId]);
    expect((await t.call<Charge>('GET', `/api/v1/agents/charge/${legacyId}`, { headers: t.admin })).body.id).toBe(legacyId);
    const refunded = await t.call<Charge>('POST', `/api/v1/agents/charge/${legacyId}/refund`, {
      headers: { ...h, 'idempotency-key': 'legacy-refund' },
      body: {},
    });
    expect([refunded.status, refunded.body.refundedAmount]).toEqual([200, 1]);
    const stored = await db().send(
      new GetCommand({ TableName: table(), Key: keys.legacyCharge(agent.id, legacyId), ConsistentRead: true }),
    );
    expect(stored.Item).toMatchObject({ refundedAmount: 100 });
    const sharded = await db().send(new GetCommand({ TableName: table(), Key: keys.charge(agent.id, legacyId), ConsistentRead: true }));
    expect(sharded.Item).toBeUndefined();
  });

  it.each(['capture', 'release'] as const)('%ss a hold made before the sharding: charge and marker where they were', async (action) => {
    const user = await t.fundedUser({ USD: 10 });
    const hold = await charge(agent.key, user.key, `legacy-hold-${action}`, { capture: false });
    await moveToLegacy(agent.id, hold.id);
    // The marker as written then: no `chargeSharded`, in the one expiry partition.
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: keys.pendingCharge(hold.id),
        UpdateExpression: 'SET GSI1PK = :legacy REMOVE chargeSharded',
        ExpressionAttributeValues: { ':legacy': INDEX_PARTITIONS.pendingExpiry.legacy },
      }),
    );
    const res = await t.call<Charge>('POST', `/api/v1/agents/charge/${hold.id}/${action}`, {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': `legacy-${action}` },
      ...(action === 'capture' ? { body: {} } : {}),
    });
    expect(res.status).toBe(200);
    const stored = await db().send(new GetCommand({ TableName: table(), Key: keys.legacyCharge(agent.id, hold.id), ConsistentRead: true }));
    expect(stored.Item?.status).toBe(action === 'capture' ? 'SUCCESS' : 'FAILED');
    const sharded = await db().send(new GetCommand({ TableName: table(), Key: keys.charge(agent.id, hold.id), ConsistentRead: true }));
    expect(sharded.Item).toBeUndefined();
  });
});
