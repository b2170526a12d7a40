/**
 * An agent's earned balance is split over write shards (docs/data-model.md). These are the
 * shards as read, and the pure plan of which shards a debit takes from.
 */
import type { Currency, Minor } from './money';
import type { Balances } from './users';

export interface ShardState {
  shard: number;
  balances: Balances;
  charges: number;
}

export interface AgentLedger {
  balances: Balances;
  charges: number;
  shards: ShardState[];
}

/** One shard's part of a debit. */
export interface ShardDebit {
  shard: number;
  amount: Minor;
}

/**
 * Plans a debit of `amount` across shards, largest first. Undefined when the shards together
 * hold too little. Between the read and the write, charges and captures only credit shards;
 * withdrawals and refunds debit them, each shard under a condition that it still holds its part,
 * so when one of them moved first the other's transaction fails, nothing moves, and it plans again
 * from a fresh read: the balance never goes below zero.
 */
export function planShardDebit(ledger: AgentLedger, currency: Currency, amount: Minor): ShardDebit[] | undefined {
  if (ledger.balances[currency] < amount) return undefined;
  const plan: ShardDebit[] = [];
  let left = amount;
  for (const s of [...ledger.shards].sort((a, b) => b.balances[currency] - a.balances[currency])) {
    if (left === 0) break;
    const take = Math.min(left, s.balances[currency]);
    if (take <= 0) continue;
    plan.push({ shard: s.shard, amount: take });
    left -= take;
  }
  return left === 0 ? plan : undefined;
}
