/**
 * The cost rule of docs/design.md §11, measured: a warm charge by a payer whose spending policy has
 * limits is still one TransactWriteItems and no read, and costs no more write units than the same
 * charge without a policy. Both are counted the way the benchmark's requests table counts them
 * (test/bench/requests.ts: the route's real handler inside a counting scope, with
 * ReturnConsumedCapacity=TOTAL against DynamoDB Local). The sweeper's cost is pinned beside it.
 */

import { keys } from '../../functions/store/table';
import { POLICY_CHARGE_CASE } from './cost';
import { sweeperCost, warmChargePair } from './requests';
import { benchContextForTests } from './test-context';

const ctx = benchContextForTests();

describe('what a charge costs under a spending policy', () => {
  it('a warm 201 under a policy with limits: one TransactWriteItems, no read, no more write units than without', async () => {
    const { plain, policy } = await warmChargePair(ctx());
    expect(policy.case).toBe(POLICY_CHARGE_CASE);
    for (const q of [plain, policy]) {
      expect({ case: q.case, dynamo: q.dynamo, reads: q.reads, readUnits: q.readUnits }).toEqual({
        case: q.case,
        dynamo: { TransactWriteItems: 1 },
        reads: 0,
        readUnits: 0,
      });
      expect(q.writeUnits).toBeGreaterThan(0);
    }
    expect(policy.writeUnits).toBeLessThanOrEqual(plain.writeUnits);
  });

  it('the sweeper: one Query per partition of its queue, then one transaction per due charge, and no read per charge', async () => {
    const row = await sweeperCost(ctx(), 3);
    // The queue is sharded (DESIGN §18: its shards and the legacy key, each read once a run); the
    // index entries are whole pending markers, and an expiry needs no answer to read back.
    expect(row.dynamo).toEqual({ Query: keys.pendingExpiryPartitions().length, TransactWriteItems: 3 });
  });
});
