/**
 * DESIGN §18's counted lines, run small against the real handlers: the keys come from what the
 * create-charge handler sends, so the figures follow the store's layout, whatever it is.
 */
import { sharedItemsAndPartitions } from './shared';
import { benchContextForTests } from './test-context';

const ctx = benchContextForTests();

describe('the items and partitions the charges of one agent and of one payer share', () => {
  it("counts them from the keys each charge's transaction sends", async () => {
    const r = await sharedItemsAndPartitions(ctx(), { agentCharges: 12, payerCharges: 12, payerAgents: 3, partitionCharges: 40 });
    expect(r.agent.charges).toBe(12);
    expect(r.payer.charges).toBe(12);
    // Whatever every charge of a payer shares includes the payer's own balance item; nothing of an agent's side is in it.
    expect(r.payer.shared).toContain('USER#|USER (Update)');
    expect(r.payer.shared.filter((s) => !s.startsWith('USER#'))).toEqual([]);
    // At most the agent item's kill-switch check is shared by all of one agent's charges (none once the flag lives on the shards).
    expect(r.agent.shared.filter((s) => s !== 'AGENTKEY#|AGENT (ConditionCheck)')).toEqual([]);
    expect(r.partitions.charges).toBe(40);
    expect(r.partitions.writes).toBeGreaterThanOrEqual(40 * 4);
    expect(r.partitions.maxShare).toBeGreaterThan(0);
    expect(r.partitions.maxShare).toBeLessThanOrEqual(r.partitions.hottestChargeShare);
    expect(r.writeUnitsPerCharge).toBeGreaterThan(0);
  });
});
