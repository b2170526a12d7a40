import type { SharedItemsResult } from './shared';
import { sharedSummaryLines } from './shared';
import { agentCeiling, renderShared } from './shared-report';

const today: SharedItemsResult = {
  agent: { charges: 100, counterparts: 100, shared: ['AGENTKEY#|AGENT (ConditionCheck)'] },
  payer: { charges: 100, counterparts: 20, shared: ['USER#|USER (Update)'] },
  partitions: {
    charges: 1000,
    writes: 8000,
    partitions: 10,
    singleUse: 5000,
    hottest: 'table:AGENTKEY#',
    maxShare: 0.125,
    hottestChargeShare: 1,
    hottestItem: 'AGENTKEY#|AGENT',
    hottestItemChargeShare: 1,
  },
  writeUnitsPerCharge: 24,
};

describe('the AWS ceiling of one agent, from the spread of its charges', () => {
  it('an item in every charge: 50–100 charges/s; a partition every charge writes once: 500/s', () => {
    expect(agentCeiling(today.partitions)).toEqual({ item: { low: 50, high: 100 }, partition: 500 });
  });

  it('a balance shard touched by one charge in eight, a charge shard by one in sixteen: 400–800/s', () => {
    const after = { ...today.partitions, writes: 6000, maxShare: 125 / 6000, hottestItemChargeShare: 1 / 8 };
    expect(agentCeiling(after)).toEqual({ item: { low: 400, high: 800 }, partition: 4000 });
  });
});

describe('the section and the lines', () => {
  it('prints the three counted lines, the partition line with its exact prefix', () => {
    expect(sharedSummaryLines(today)).toEqual([
      'bench: items shared by all charges of one agent 1',
      'bench: partitions written by 1000 charges of one agent 10 max share 12.5%',
      'bench: items shared by all charges of one payer 1',
    ]);
    expect(sharedSummaryLines(undefined)).toEqual([]);
  });

  it('renders the ceilings with their sources', () => {
    const md = renderShared(today).join('\n');
    expect(md).toContain('## Shared items and partitions');
    expect(md).toContain('transaction-conflict-handling');
    expect(md).toContain('**50–100 charges/s**');
    expect(renderShared(undefined).join('\n')).toContain('Not measured in this run');
  });
});
