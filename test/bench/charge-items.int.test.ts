/**
 * What each item of the warm charge's TransactWriteItems costs, on its own (DESIGN §18, W ≤ 12).
 * A real charge is made through the route's handler (test/bench/requests.ts), its transaction is
 * captured, and each of its items is then sent alone, in a TransactWriteItems of one, to a second
 * table of the same shape seeded with what the items found (the user, the shard, the agent as they
 * were before the charge), so every condition holds and each item's write units show on their own
 * (ReturnConsumedCapacity TOTAL and INDEXES). The charge Put is sent again without each index key,
 * to show what DynamoDB Local charges for an index entry. The table goes to docs/data-model.md.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { ensureTable } from '../../bin/local/table';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import type { TransactItem } from '../../functions/store/transact';
import { plainTransactItem } from '../support/transact-items';
import { enabledAgent, fundedUser } from './context';
import { apiEvent, countedRun, installScopedCounters } from './requests';
import { benchContextForTests } from './test-context';

const ctx = benchContextForTests();

/**
 * The warm charge's write units as DynamoDB Local reports them: 24 with the outbox item, 16 without,
 * 12 now (DESIGN §18): the small items 4, the charge with its one index entry (GSI2, the user's
 * history) 8. Its by-id entry went because the id names its agent (core/ids.ts newChargeId); the
 * probe below shows two entries cost 8 wherever they are.
 */
const WARM_CHARGE_UNITS = 12;

type Key = Record<string, unknown>;
interface Captured {
  items: TransactItem[];
  /** What each Update / ConditionCheck found, before the transaction. */
  before: Record<string, unknown>[];
}

let raw: DynamoDBDocumentClient;
const measureTable = `${config().TABLE_NAME}-items`;

beforeAll(async () => {
  raw = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: 'us-east-1',
      endpoint: config().DYNAMODB_ENDPOINT ?? '',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
  await ensureTable(config().DYNAMODB_ENDPOINT ?? '', measureTable);
});
afterAll(() => raw.destroy());

let capture: ((c: Captured) => void) | undefined;
let installed = false;
function installCapture(): void {
  if (installed) return;
  installed = true;
  db().middlewareStack.add(
    (next, context) => async (args) => {
      if (capture && /TransactWrite/.test(context.commandName ?? '')) {
        const input = args.input as { TransactItems: TransactItem[] };
        const items = structuredClone(input.TransactItems).map(plainTransactItem);
        const before: Record<string, unknown>[] = [];
        for (const item of items) {
          const key = (item.Update?.Key ?? item.ConditionCheck?.Key) as Key | undefined;
          if (!key) continue;
          const got = await raw.send(new GetCommand({ TableName: config().TABLE_NAME, Key: key, ConsistentRead: true }));
          if (got.Item) before.push(got.Item);
        }
        capture({ items, before });
        capture = undefined;
      }
      return next(args);
    },
    { step: 'initialize', name: 'captureChargeItems' },
  );
}

const kindOf = (item: TransactItem): string => {
  const body = item.Put ?? item.Update ?? item.ConditionCheck ?? item.Delete;
  const key = ((body as { Key?: Key } | undefined)?.Key ?? (item.Put?.Item as Key | undefined)) as Key;
  const family = String(key.PK).replace(/#.*$/, '');
  return `${Object.keys(item)[0]} ${family}`;
};

/** Sends one item alone to the measuring table; its reported units (total and per index). */
async function alone(item: TransactItem): Promise<{ total: number; table: number; indexes: Record<string, number> }> {
  const copy = structuredClone(item);
  const body = (copy.Put ?? copy.Update ?? copy.ConditionCheck ?? copy.Delete) as { TableName: string };
  body.TableName = measureTable;
  const out = await raw.send(new TransactWriteCommand({ TransactItems: [copy], ReturnConsumedCapacity: 'INDEXES' }));
  const consumed = out.ConsumedCapacity?.[0];
  const indexes = Object.fromEntries(
    Object.entries(consumed?.GlobalSecondaryIndexes ?? {}).map(([name, c]) => [name, c.CapacityUnits ?? 0]),
  );
  return { total: consumed?.CapacityUnits ?? 0, table: consumed?.Table?.CapacityUnits ?? 0, indexes };
}

async function chargeItems(
  headers: Record<string, string>,
  body: string,
  expected: number,
): Promise<{ captured: Captured; units: number }> {
  installScopedCounters();
  installCapture();
  let captured: Captured | undefined;
  capture = (c) => {
    captured = c;
  };
  const { handler } = (await import('../../functions/api/create-charge.handler')) as {
    handler: (e: unknown) => Promise<{ statusCode: number }>;
  };
  const { value: res, scope } = await countedRun(() =>
    handler(apiEvent('POST', '/api/v1/agents/charges', '/api/v1/agents/charges', { headers, body })),
  );
  expect(res.statusCode).toBe(expected);
  if (!captured) throw new Error('no transaction captured');
  return { captured, units: scope.writeUnits };
}

async function breakdown(captured: Captured): Promise<Record<string, string>> {
  for (const item of captured.before) await raw.send(new PutCommand({ TableName: measureTable, Item: item }));
  const rows: Record<string, string> = {};
  for (const item of captured.items) {
    const u = await alone(item);
    const idx = Object.entries(u.indexes)
      .map(([n, c]) => `${n} ${c}`)
      .join(', ');
    rows[kindOf(item)] = `${u.total}${idx ? ` (table ${u.table}, ${idx})` : ''}, ${Buffer.byteLength(JSON.stringify(item))} bytes`;
    // The charge Put again without each index key: what an index entry costs here.
    const put = item.Put?.Item as Key | undefined;
    if (put?.type === 'Charge') {
      for (const drop of [
        ['GSI1PK', 'GSI1SK'],
        ['GSI2PK', 'GSI2SK'],
        ['GSI1PK', 'GSI1SK', 'GSI2PK', 'GSI2SK'],
      ]) {
        const fresh = `${String(put.SK)}x${drop.length}${drop[0]}`;
        const variant: Key = { ...put, SK: fresh };
        for (const d of drop) delete variant[d];
        const v = await alone({ Put: { ...item.Put, Item: variant } as NonNullable<TransactItem['Put']> });
        rows[`  charge Put without ${drop.join(', ')}`] = `${v.total}`;
      }
    }
  }
  return rows;
}

/** The whole transaction, on the measuring table reset to the state before it, without the items `drop` says. */
async function together(captured: Captured, keep: (item: TransactItem, i: number) => boolean): Promise<number> {
  for (const item of captured.before) await raw.send(new PutCommand({ TableName: measureTable, Item: item }));
  const items = captured.items.filter(keep).map((item) => {
    const copy = structuredClone(item);
    const body = (copy.Put ?? copy.Update ?? copy.ConditionCheck ?? copy.Delete) as { TableName: string; Item?: Key };
    body.TableName = measureTable;
    if (body.Item) body.Item = { ...body.Item, SK: `${String(body.Item.SK)}#${Math.random()}` };
    return copy;
  });
  const out = await raw.send(new TransactWriteCommand({ TransactItems: items, ReturnConsumedCapacity: 'INDEXES' }));
  return (out.ConsumedCapacity ?? []).reduce((a, c) => a + (c.CapacityUnits ?? 0), 0);
}

async function marginal(captured: Captured): Promise<Record<string, number>> {
  const rows: Record<string, number> = { 'all items': await together(captured, () => true) };
  for (const [i, item] of captured.items.entries()) {
    rows[`without ${kindOf(item)}`] = await together(captured, (_, j) => j !== i);
  }
  for (let n = 1; n <= captured.items.length; n++) rows[`first ${n}`] = await together(captured, (_, j) => j < n);
  return rows;
}

it('the warm 201 charge, item by item: no outbox item, at most WARM_CHARGE_UNITS', async () => {
  const c = ctx();
  const agent = await enabledAgent(c);
  const user = await fundedUser(c, { USD: '100' });
  const headers = (key: string) => ({ 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': key });
  const body = '{"amount":1.25,"currency":"USD","description":"bench"}';
  await chargeItems(headers(`seed-${Date.now()}`), body, 201); // warm the caches
  const { captured, units } = await chargeItems(headers(`m-${Date.now()}`), body, 201);
  const rows = await breakdown(captured);
  const inTransaction = await marginal(captured);
  console.log(JSON.stringify({ 'warm 201 charge, as one transaction': units, items: rows, inTransaction }, null, 2));
  // No outbox item: the charge's INSERT stream record carries its events (DESIGN §18).
  expect(Object.keys(rows).filter((k) => k.includes('OUTBOX'))).toEqual([]);
  expect(units).toBe(inTransaction['all items']);
  expect(units).toBeLessThanOrEqual(WARM_CHARGE_UNITS);
});

/**
 * How DynamoDB Local reports a TransactWriteItems' capacity (the bench's W): each item's own units
 * (4 per KB for the table, 4 per KB for each index entry), but items of EQUAL capacity are counted
 * once. So the total is the sum over the distinct (table, per-index) capacities of the items: the
 * small items of a charge (user, shard, idempotency record, kill switch check) together cost 4,
 * each index entry 4, a 1–2 KB outbox item 8. AWS bills every item (2 WCU per KB each, index
 * entries 1 WCU per KB each); docs/data-model.md has both.
 */
it("DynamoDB Local counts a transaction as the sum of its items' distinct capacities", async () => {
  const pad = (n: number) => 'x'.repeat(n);
  let seq = 0;
  const put = (bytes: number, gsi = 0): TransactItem => ({
    Put: {
      TableName: measureTable,
      Item: {
        PK: `PROBE#${++seq}`,
        SK: 'P',
        v: pad(bytes),
        ...(gsi >= 1 ? { GSI1PK: `G1#${seq}`, GSI1SK: 'x' } : {}),
        ...(gsi >= 2 ? { GSI2PK: `G2#${seq}`, GSI2SK: 'x' } : {}),
      },
    },
  });
  const run = async (items: TransactItem[]) => {
    const out = await raw.send(new TransactWriteCommand({ TransactItems: items, ReturnConsumedCapacity: 'INDEXES' }));
    return JSON.stringify(out.ConsumedCapacity);
  };
  const rows: Record<string, string> = {
    '1 × 100 B': await run([put(100)]),
    '2 × 100 B': await run([put(100), put(100)]),
    '5 × 100 B': await run([1, 2, 3, 4, 5].map(() => put(100))),
    '1 × 900 B': await run([put(900)]),
    '2 × 900 B': await run([put(900), put(900)]),
    '1 × 2000 B': await run([put(2000)]),
    '100 B + 2000 B': await run([put(100), put(2000)]),
    '1 × 100 B GSI1': await run([put(100, 1)]),
    '2 × 100 B GSI1': await run([put(100, 1), put(100, 1)]),
    '1 × 100 B GSI1+2': await run([put(100, 2)]),
    '100 B GSI1+2, 100 B': await run([put(100, 2), put(100)]),
    '100 B GSI1+2, 2000 B': await run([put(100, 2), put(2000)]),
    '4 × 100 B, one GSI1+2': await run([put(100, 2), put(100), put(100), put(100)]),
  };
  console.log(JSON.stringify(rows, null, 2));
  const total = (row: string | undefined) =>
    (JSON.parse(row ?? '[]') as { CapacityUnits?: number }[]).reduce((a, c) => a + (c.CapacityUnits ?? 0), 0);
  // One item alone: 4 units up to 1 KB, 8 up to 2 KB, and 4 more for each index entry.
  expect([rows['1 × 100 B'], rows['1 × 2000 B'], rows['1 × 100 B GSI1+2']].map(total)).toEqual([4, 8, 12]);
  // Several: items of the same capacity (table and each index alike) are counted once, not per item.
  expect([rows['2 × 100 B'], rows['5 × 100 B'], rows['2 × 900 B'], rows['2 × 100 B GSI1']].map(total)).toEqual([4, 4, 4, 8]);
  expect([rows['100 B + 2000 B'], rows['100 B GSI1+2, 100 B'], rows['4 × 100 B, one GSI1+2']].map(total)).toEqual([12, 16, 16]);
});
