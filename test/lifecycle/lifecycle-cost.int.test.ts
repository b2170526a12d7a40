/**
 * The performance rule of the charge lifecycle (docs/design.md §12), measured the way the
 * benchmark's requests table counts (test/bench/requests.ts: the route's real handler in a
 * counting scope against DynamoDB Local): with warm caches a capture, a release and a refund are
 * each ONE TransactWriteItems, after one strongly consistent read of what they act on.
 */

import { lifecycleCosts } from '../bench/requests';
import { benchContextForTests } from '../bench/test-context';

const ctx = benchContextForTests();

it('warm capture, release and refund: one read of what they act on, then one TransactWriteItems each', async () => {
  const [capture, release, refund] = await lifecycleCosts(ctx());
  expect(capture?.dynamo).toEqual({ GetItem: 1, TransactWriteItems: 1 });
  expect(release?.dynamo).toEqual({ GetItem: 1, TransactWriteItems: 1 });
  // The charge and the agent's balance shards come back in the same BatchGetItem.
  expect(refund?.dynamo).toEqual({ BatchGetItem: 1, TransactWriteItems: 1 });
  for (const row of [capture, release, refund]) expect(row?.writeUnits).toBeGreaterThan(0);
});
