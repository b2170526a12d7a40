/**
 * DESIGN §13's performance rule, measured as the benchmark measures it (test/bench/requests.ts
 * `topupCreditCost`, the row behind `bench: topup credit requests N`): a watcher run that credits
 * one USDC top-up paid by a real signed transfer sends exactly one TransactWriteItems and a few
 * small reads, and a bounded number of Solana RPC calls.
 */

import { keys } from '../../functions/store/table';
import { topupCreditCost } from './requests';
import { benchContextForTests } from './test-context';

const ctx = benchContextForTests();

describe('what one completed top-up costs', () => {
  it('one TransactWriteItems, a bounded number of reads, three RPC calls', async () => {
    const row = await topupCreditCost(ctx());
    expect(row.dynamo.TransactWriteItems).toBe(1);
    // Pending list (one Query per partition of it: its shards and the legacy key, DESIGN §18),
    // deposit cursor (Get), the guards of the new deposit signature (its cross-rail and its top-up
    // guard: one BatchGet), then the cursor's move (Put): constant per run, whatever the chain's
    // history and however many top-ups are open.
    expect(row.dynamo).toEqual({
      BatchGetItem: 1,
      GetItem: 1,
      PutItem: 1,
      Query: keys.pendingTopupPartitions().length,
      TransactWriteItems: 1,
    });
    expect(row.case).toBe('1 USDC credit, 3 RPC calls');
  });
});
