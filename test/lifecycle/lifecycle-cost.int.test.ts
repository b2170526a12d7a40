/**
 * The performance rule of the charge lifecycle (docs/design.md §12), measured the way the
 * benchmark's requests table counts (test/bench/requests.ts: the route's real handler in a
 * counting scope against DynamoDB Local): with warm caches a capture, a release and a refund are
 * each ONE TransactWriteItems, after one strongly consistent read of what they act on.
 */

import type { BenchContext } from '../bench/context';
import { httpClient } from '../bench/http';
import { lifecycleCosts } from '../bench/requests';
import { auditAfterAll } from '../support/audit';
import { startTestStack, type TestStack } from '../support/stack';
import { createTestTable } from '../support/table';

let t: TestStack;
let ctx: BenchContext;
let close = () => {};
beforeAll(async () => {
  await createTestTable();
  t = await startTestStack({}, { sweepIntervalMs: 0 });
  const http = httpClient(t.stack.url);
  close = http.close;
  ctx = { stack: t.stack, call: http.call, admin: t.admin, quick: true, log: () => {} };
});
afterAll(async () => {
  close();
  await t?.stack.stop();
});
auditAfterAll();

it('warm capture, release and refund: one read of what they act on, then one TransactWriteItems each', async () => {
  const [capture, release, refund] = await lifecycleCosts(ctx);
  expect(capture?.dynamo).toEqual({ GetItem: 1, TransactWriteItems: 1 });
  expect(release?.dynamo).toEqual({ GetItem: 1, TransactWriteItems: 1 });
  // The charge and the agent's balance shards come back in the same BatchGetItem.
  expect(refund?.dynamo).toEqual({ BatchGetItem: 1, TransactWriteItems: 1 });
  for (const row of [capture, release, refund]) expect(row?.writeUnits).toBeGreaterThan(0);
});
