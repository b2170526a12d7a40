/**
 * What one use of a tab costs (DESIGN §29), measured as the benchmark measures it (tab-usage.ts,
 * the lines `bench: tab usage requests N reads R wcu W`, `bench: cost per million tab uses $X`): a
 * warm use is ONE TransactWriteItems, no read, at most 4 write units (the tab item's update and the
 * use's put, each under 1 KB, in a transaction), and no item is shared by the uses of one payer's
 * tabs (nothing of the payer's or the agent's balance is written).
 */
import { tabUsageCost, tabUsageLines } from './tab-usage';
import { benchContextForTests } from './test-context';

const ctx = benchContextForTests();

describe('what one use of a tab costs', () => {
  it('one write request, no read, 4 write units, nothing shared by one payer’s tabs, under $4 a million', async () => {
    const cost = await tabUsageCost(ctx(), 6);
    expect({ status: cost.status, dynamo: cost.dynamo, reads: cost.reads, writeUnits: cost.writeUnits, shared: cost.shared }).toEqual({
      status: 200,
      dynamo: { TransactWriteItems: 1 },
      reads: 0,
      writeUnits: 4,
      shared: [],
    });
    const [requests, price] = tabUsageLines(cost);
    expect(requests).toBe('bench: tab usage requests 1 reads 0 wcu 4');
    expect(Number(price?.replace(/.*\$/, ''))).toBeLessThanOrEqual(4);
  });
});
