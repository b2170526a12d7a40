/**
 * An agent's earned balance is write-sharded: each charge credits one of BALANCE_SHARDS items
 * (picked at random), so no single item takes every payment of a busy agent (one item sustains
 * ~500 transactional writes/s, fewer under conflict). Reads sum the shards with one
 * BatchGetItem. Each shard also counts the agent's charges, which gives the charge list its
 * `total` without a per-agent hot counter or a count query. See docs/data-model.md.
 */
import { config } from '../config';
import { BalanceLimitError, StaleReadError } from '../core/errors';
import type { AgentLedger, ShardDebit, ShardState } from '../core/ledger';
import { CURRENCIES, type Currency, type Minor } from '../core/money';
import { zeroBalances } from '../core/users';
import { batchGetConsistent } from './batch-get';
import { headroom, readMinor } from './numbers';
import { keys } from './table';
import { type NamedItem, named } from './transact';

export const randomShard = (): number => Math.floor(Math.random() * config().BALANCE_SHARDS);

/**
 * Update that credits `amount` (may be 0) to one shard, and with `countsCharge` counts one more
 * charge. Its condition keeps the shard under MAX_BALANCE_MINOR: failed, it means BalanceLimitError.
 */
export function shardCredit(
  agentId: string,
  shard: number,
  currency: Currency,
  amount: Minor,
  opts: { countsCharge?: boolean } = {},
): NamedItem {
  const names: Record<string, string> = { '#cur': currency };
  const values: Record<string, number> = { ':amount': amount };
  let update = 'ADD #cur :amount';
  if (opts.countsCharge) {
    update += ', charges :one';
    values[':one'] = 1;
  }
  const item = {
    Update: {
      TableName: config().TABLE_NAME,
      Key: keys.agentBalanceShard(agentId, shard),
      UpdateExpression: `${update} SET agentId = if_not_exists(agentId, :agentId), #type = if_not_exists(#type, :type)`,
      ConditionExpression: 'attribute_not_exists(#cur) OR #cur <= :headroom',
      ExpressionAttributeNames: { ...names, '#type': 'type' },
      ExpressionAttributeValues: {
        ...values,
        ':agentId': agentId,
        ':type': 'AgentBalanceShard',
        ':headroom': headroom(amount),
      } as Record<string, unknown>,
    },
  };
  return named(item, { onConditionFailed: () => new BalanceLimitError() });
}

/**
 * Conditional debit of one shard: succeeds only while the shard still holds `amount`. Failed, it
 * means the balance the plan was made from moved (another withdrawal or refund): StaleReadError.
 */
export function shardDebit(agentId: string, shard: number, currency: Currency, amount: Minor): NamedItem {
  const item = {
    Update: {
      TableName: config().TABLE_NAME,
      Key: keys.agentBalanceShard(agentId, shard),
      UpdateExpression: 'ADD #cur :neg',
      ConditionExpression: '#cur >= :amount',
      ExpressionAttributeNames: { '#cur': currency },
      ExpressionAttributeValues: { ':neg': -amount, ':amount': amount },
    },
  };
  return named(item, { onConditionFailed: () => new StaleReadError('agent balance') });
}

/** Sums every shard of an agent (strongly consistent, one BatchGetItem). */
export async function readAgentLedger(agentId: string): Promise<AgentLedger> {
  const shardKeys = Array.from({ length: config().BALANCE_SHARDS }, (_, i) => keys.agentBalanceShard(agentId, i));
  const shards: ShardState[] = (await batchGetConsistent(shardKeys)).map((item) => {
    const balances = zeroBalances();
    for (const c of CURRENCIES) balances[c] = readMinor(item, c);
    const shard = Number(String(item.PK).split('#').pop());
    return { shard, balances, charges: readMinor(item, 'charges') };
  });
  const balances = zeroBalances();
  let charges = 0;
  for (const s of shards) {
    for (const c of CURRENCIES) balances[c] += s.balances[c];
    charges += s.charges;
  }
  shards.sort((a, b) => a.shard - b.shard);
  return { balances, charges, shards };
}

/** The conditional shard debits of a plan (core/ledger.ts `planShardDebit`). */
export function shardDebits(agentId: string, currency: Currency, plan: readonly ShardDebit[]): NamedItem[] {
  return plan.map((part) => shardDebit(agentId, part.shard, currency, part.amount));
}
