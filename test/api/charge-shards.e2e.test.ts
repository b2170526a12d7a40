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
import { useTestStack } from '../support/stack';
import { recordTableRequests, type TableRequest } from '../support/table-access';

const t = useTestStack();
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

/**
 * Turns a charge into one written before the sharding: its id of the earlier form (27 characters,
 * naming no agent: core/ids.ts), its item in the agent's unsharded partition with the by-id GSI1
 * entry charges had then, and a hold's pending marker renamed with it. Returns the earlier id.
 */
async function moveToLegacy(agentId: string, chargeId: string): Promise<string> {
  const earlier = chargeId.slice(0, 27);
  const from = keys.charge(agentId, chargeId);
  const item = (await db().send(new GetCommand({ TableName: table(), Key: from, ConsistentRead: true }))).Item;
  if (!item) throw new Error(`no charge ${chargeId}`);
  await db().send(
    new PutCommand({
      TableName: table(),
      Item: {
        ...item,
        ...keys.legacyCharge(agentId, earlier),
        ...keys.chargeIndex(earlier),
        ...keys.userChargeIndex(String(item.userId), earlier),
        id: earlier,
      },
    }),
  );
  await db().send(new DeleteCommand({ TableName: table(), Key: from }));
  const marker = (await db().send(new GetCommand({ TableName: table(), Key: keys.pendingCharge(chargeId), ConsistentRead: true }))).Item;
  if (marker) {
    const renamed = { ...marker, ...keys.pendingCharge(earlier), chargeId: earlier };
    if (typeof marker.expiresAt === 'string') Object.assign(renamed, keys.pendingExpiryIndex(marker.expiresAt, earlier));
    await db().send(new PutCommand({ TableName: table(), Item: renamed }));
    await db().send(new DeleteCommand({ TableName: table(), Key: keys.pendingCharge(chargeId) }));
  }
  return earlier;
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
    // Its id becomes one of the earlier form: the order is the same (the ULID comes first).
    legacyId = await moveToLegacy(agent.id, newestFirst[30] as string);
    newestFirst[30] = legacyId;
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

  it('finds a charge by its id alone with one GetItem and no index: the id names its agent (an earlier id: through GSI1)', async () => {
    const id = newestFirst[3] as string;
    expect(id).toHaveLength(54);
    expect(id.endsWith(agent.id)).toBe(true);
    const item = (await db().send(new GetCommand({ TableName: table(), Key: keys.charge(agent.id, id), ConsistentRead: true }))).Item;
    // The charge item carries the user's history entry (GSI2) and no by-id entry (DESIGN §18, W ≤ 12).
    expect(item).toMatchObject({ GSI2PK: keys.userChargePartition(String(item?.userId)) });
    expect(item?.GSI1PK).toBeUndefined();
    const seen: TableRequest[] = [];
    const stop = recordTableRequests((r) => {
      if (r.fn === 'admin-get-charge') seen.push(r);
    });
    try {
      const got = await t.call<Charge>('GET', `/api/v1/admin/charges/${id}`, { headers: t.admin });
      expect([got.status, got.body.id]).toEqual([200, id]);
      const earlier = await t.call<Charge>('GET', `/api/v1/admin/charges/${legacyId}`, { headers: t.admin });
      expect([earlier.status, earlier.body.id]).toEqual([200, legacyId]);
      // Another agent's id in the agent part names nothing.
      const forged = `${id.slice(0, 27)}${(await t.enabledAgent()).id}`;
      expect((await t.call('GET', `/api/v1/admin/charges/${forged}`, { headers: t.admin })).status).toBe(404);
      expect(
        (await t.call('GET', `/api/v1/agents/charge/${id}`, { headers: { 'x-agent-key': (await t.enabledAgent()).key } })).status,
      ).toBe(404);
    } finally {
      stop();
    }
    expect(seen.map((r) => r.action)).toEqual(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:GetItem']);
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
    const holdId = await moveToLegacy(agent.id, hold.id);
    // The marker as written then: no `chargeSharded`, in the one expiry partition.
    await db().send(
      new UpdateCommand({
        TableName: table(),
        Key: keys.pendingCharge(holdId),
        UpdateExpression: 'SET GSI1PK = :legacy REMOVE chargeSharded',
        ExpressionAttributeValues: { ':legacy': INDEX_PARTITIONS.pendingExpiry.legacy },
      }),
    );
    const res = await t.call<Charge>('POST', `/api/v1/agents/charge/${holdId}/${action}`, {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': `legacy-${action}` },
      ...(action === 'capture' ? { body: {} } : {}),
    });
    expect(res.status).toBe(200);
    const stored = await db().send(new GetCommand({ TableName: table(), Key: keys.legacyCharge(agent.id, holdId), ConsistentRead: true }));
    expect(stored.Item?.status).toBe(action === 'capture' ? 'SUCCESS' : 'FAILED');
    const sharded = await db().send(new GetCommand({ TableName: table(), Key: keys.charge(agent.id, holdId), ConsistentRead: true }));
    expect(sharded.Item).toBeUndefined();
  });
});
