/**
 * The "Shared items and partitions" section of benchmarks.md (DESIGN §18): what the run counted,
 * and the AWS ceilings per agent and per payer, before and after, each with how it is derived.
 */
import { config } from '../../functions/config';
import { CHARGE_SHARDS } from '../../functions/store/table';
import type { SharedItemsResult } from './shared';
import type { PartitionSpread } from './written';

/** AWS figures the ceilings rest on, each with its source. */
export const AWS = {
  /** Write units a second one partition serves. */
  partitionWcuPerSecond: 1000,
  partitionRcuPerSecond: 3000,
  /** A transactional write of an item up to 1 KB: 2 write units. */
  transactionalWcuPerItem: 2,
  /**
   * Transactions a second one item lets through when every transaction touches it: they conflict
   * (TransactionConflict cancels all but one), so they run one at a time; a TransactWriteItems of
   * a handful of items takes about 10–20 ms on AWS (an estimate, not a documented figure).
   */
  serialTransactionsPerSecond: { low: 50, high: 100 },
  sources: {
    conflicts: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling',
    capacity: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling',
    partitions: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html',
  },
} as const;

export interface Ceiling {
  /** Charges a second the most-touched item lets through (it serializes the transactions touching it). */
  item: { low: number; high: number };
  /** Charges a second before the most-written partition reaches its write units. */
  partition: number;
}

/**
 * One agent's ceiling from the spread of its charges: the item most of them touch lets through
 * 50–100 transactions a second, shared by the fraction of the charges that touch it; the
 * partition most written takes 1000 write units a second, at 2 a transactional write.
 */
export function agentCeiling(p: PartitionSpread): Ceiling {
  const itemShare = Math.max(p.hottestItemChargeShare, 1e-9);
  const writesPerCharge = (p.maxShare * p.writes) / Math.max(1, p.charges);
  return {
    item: { low: AWS.serialTransactionsPerSecond.low / itemShare, high: AWS.serialTransactionsPerSecond.high / itemShare },
    partition: AWS.partitionWcuPerSecond / (AWS.transactionalWcuPerItem * Math.max(writesPerCharge, 1e-9)),
  };
}

const n0 = (x: number) => (x >= 100 ? String(Math.round(x / 10) * 10) : x.toFixed(0));
const pct = (x: number) => `${(100 * x).toFixed(1).replace(/\.0$/, '')}%`;
const list = (xs: string[]) => (xs.length ? xs.map((x) => `\`${x}\``).join(', ') : 'none');

export function renderShared(s: SharedItemsResult | undefined): string[] {
  const out: string[] = ['## Shared items and partitions', ''];
  if (!s) {
    out.push('Not measured in this run (the run predates these lines).', '');
    return out;
  }
  const p = s.partitions;
  const now = agentCeiling(p);
  const serial = AWS.serialTransactionsPerSecond;
  out.push(
    'Counted from keys, not timed (DESIGN §18). Each charge goes through the real create-charge handler inside the counting ' +
      'scope of `test/bench/requests.ts`, which keeps the key of every item each write request sends (a `ConditionCheck` counts ' +
      'as touching its item) and the partitions it lands in: the table partition and the index partition of every index ' +
      '`functions/store/table.ts` declares, from a Put’s item or an Update’s SET clause (`test/bench/written.ts`). Whatever ' +
      'the store sends is what is counted; no list of item kinds is kept here.',
    '',
    '| line | this run | goal |',
    '| --- | --- | --- |',
    `| items shared by all ${s.agent.charges} charges of one agent (to ${s.agent.counterparts} payers) | **${s.agent.shared.length}**: ${list(s.agent.shared)} | 0 |`,
    `| partitions written by more than one of ${p.charges} charges of one agent (a payer each) | **${p.partitions}**, largest share **${pct(p.maxShare)}** of ${p.writes} partition writes (\`${p.hottest}\`, written by ${pct(p.hottestChargeShare)} of the charges); ${p.singleUse} partitions written by one charge only | ≥ 16, none over 10% |`,
    `| items shared by all ${s.payer.charges} charges of one payer (to ${s.payer.counterparts} agents) | **${s.payer.shared.length}**: ${list(s.payer.shared)} | printed; ceiling below |`,
    `| write units per charge (DynamoDB Local) | ${s.writeUnitsPerCharge.toFixed(1)} | ≤ 12 |`,
    '',
    'P counts the partitions more than one of the charges wrote: a partition only one charge writes (its idempotency record, ' +
      'its payer’s items and history index entry here, since each charge has a payer of its own) cannot be where an agent’s ' +
      'charges queue, and counting it would only grow with the number of charges run. The share is of all partition writes.',
    '',
    '### AWS ceilings, per agent and per payer',
    '',
    `What they rest on. Two concurrent transactions that touch the same item conflict and DynamoDB cancels one ` +
      `(\`TransactionConflict\`, a \`ConditionCheck\` included: ${AWS.sources.conflicts}), so an item every charge touches ` +
      `serializes those charges: with a transaction of a handful of items taking about 10–20 ms on AWS (an estimate), one such ` +
      `item lets ${serial.low}–${serial.high} transactions a second through. One partition serves ${AWS.partitionWcuPerSecond} write ` +
      `units and ${AWS.partitionRcuPerSecond} read units a second (${AWS.sources.partitions}), and a transactional write of an item ` +
      `up to 1 KB takes ${AWS.transactionalWcuPerItem} (${AWS.sources.capacity}). Derivation: item bound = ${serial.low}–${serial.high} ÷ ` +
      '(fraction of the charges touching the most-touched item); partition bound = 1000 ÷ (2 × writes per charge to the most-written ' +
      'partition). The ceiling is the lower.',
    '',
    '| ceiling | before (part two, issue 22 as filed) | this run | after (issue 22’s design) |',
    '| --- | --- | --- | --- |',
    `| one agent | **${serial.low}–${serial.high} charges/s**: every charge checks the agent item (the kill switch), so they run one at a time, whatever the number of balance shards; the partition bound (every charge item in \`CHARGES#<agent>\`: 1000 ÷ 2) is 500/s | item: \`${p.hottestItem}\` touched by ${pct(p.hottestItemChargeShare)} of the charges → ${n0(now.item.low)}–${n0(now.item.high)}/s; partition: \`${p.hottest}\` → ${n0(now.partition)}/s; **${n0(Math.min(now.item.low, now.partition))}–${n0(Math.min(now.item.high, now.partition))} charges/s** | no item in every charge (the enabled flag on each balance shard), the charge partition in ${CHARGE_SHARDS} shards: the most-touched item is a balance shard, touched by 1 charge in \`BALANCE_SHARDS\` (${config().BALANCE_SHARDS}) → ${config().BALANCE_SHARDS * serial.low}–${config().BALANCE_SHARDS * serial.high} charges/s, rising with the shard count until the partitions bind (a charge shard takes 1/${CHARGE_SHARDS} of the charges: ${n0(CHARGE_SHARDS * 500)}/s) |`,
    `| one payer | **${serial.low}–${serial.high} charges/s**: every charge updates the user item (balance and spend counters) | ${s.payer.shared.length ? `${list(s.payer.shared)} in every charge → **${serial.low}–${serial.high} charges/s**` : `no item in every charge`} | unchanged by issue 22 (${serial.low}–${serial.high}/s): the design below lifts it |`,
    '',
    'How the per-payer ceiling would be lifted (not built). A payer’s spend has a natural shard: the grant (DESIGN §16). Each ' +
      'grant already has its own item with its own counters; give it a *reserve* too, a slice of the payer’s balance moved onto ' +
      'the grant item when the grant is created or topped up (one transaction that debits the user item and credits the grant). ' +
      'A grant-key charge then conditions and debits only its grant’s item, never the user item, so a payer’s charges across k ' +
      `grants (k agents) run at k × ${serial.low}–${serial.high}/s, and one agent–payer pair keeps the per-item rate, which is ` +
      'already its own. The user item is touched only by account-key charges (the legacy path) and by moving money into and out ' +
      'of reserves; payer-wide daily and monthly limits become per-grant limits (a grant’s limits are its own) or are enforced ' +
      'by how much the reserves hold. Without grants, the same shape is a per-payer balance split into a few shards, each with a ' +
      'reserve: a charge debits one shard, a shard that runs low is refilled from another in a transaction of two items, and the ' +
      'balance a payer sees is the sum (as the agent’s balance shards are read today).',
    '',
  );
  return out;
}
