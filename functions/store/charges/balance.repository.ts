/**
 * An agent's earned balance is write-sharded: each charge credits one of BALANCE_SHARDS items
 * (picked at random), so no single item takes every payment of a busy agent (one item sustains
 * ~500 transactional writes/s, fewer under conflict). Reads sum the shards with one
 * BatchGetItem. Each shard also counts the agent's charges, which gives the charge list its
 * `total` without a per-agent hot counter or a count query. See docs/data-model.md.
 *
 * Each shard also carries the agent's kill switch (DESIGN §18): `enabledKeyHash`, the key hash of
 * the agent item while that item says `enabled: true` (absent otherwise), and `killSwitchGen`, the
 * agent item's key generation it was copied from. A charge's credit is conditioned on
 * `enabledKeyHash = <the caller's key hash>`, so the item a charge already updates is its kill
 * switch: one condition stops a disabled agent and a rotated-away key, and no item is shared by
 * all charges of one agent. The agent item stays the source of truth: the writers of the agent
 * item (agent.repository.ts) write the shards in the same transaction, and an operator's edit in
 * the console reaches them through the table stream (functions/kill-switch/fanout.ts).
 */
import { config } from '../../config';
import { AgentDisabledError, BalanceLimitError, StaleReadError } from '../../core/errors';
import type { AgentLedger, ShardDebit, ShardState } from '../../core/ledger';
import { CURRENCIES, type Currency, type Minor } from '../../core/money';
import { zeroBalances } from '../../core/users';
import { batchGetConsistent } from '../batch-get';
import { headroom, readMinor } from '../numbers';
import { keys } from '../table';
import { type NamedItem, named, type OldItem, PRECEDENCE, type SingleWrite, type TransactItem } from '../transact';

export const randomShard = (): number => Math.floor(Math.random() * config().BALANCE_SHARDS);

const SHARD_TYPE = 'AgentBalanceShard';

/** Whether the shard as it was (ALL_OLD) let `keyHash` through its kill switch. */
const switchedOn = (old: OldItem | undefined, keyHash: string): boolean => old?.enabledKeyHash === keyHash;

/**
 * Update that credits `amount` (may be 0) to one shard, and with `countsCharge` counts one more
 * charge. Its condition keeps the shard under MAX_BALANCE_MINOR: failed, it means BalanceLimitError.
 * With `killSwitch` (the caller's agent key hash: an agent's own charge or capture), it holds only
 * while the shard's kill switch is on for that key; the one condition then has two meanings, told
 * apart by the shard as it was: switched off (or another key's, or no shard yet) is
 * AgentDisabledError with the kill switch's precedence, else the cap.
 * With `enabledAgent` (a payer's approval, which knows no agent key): it holds only while the
 * shard's kill switch is on for whatever key the agent has now; switched off is AgentDisabledError
 * at the precedence given (the caller's items rank it: a payer is told a lost race first).
 */
export function shardCredit(
  agentId: string,
  shard: number,
  currency: Currency,
  amount: Minor,
  opts: { countsCharge?: boolean; killSwitch?: string; enabledAgent?: { precedence: number } } = {},
): NamedItem {
  const names: Record<string, string> = { '#cur': currency };
  const values: Record<string, unknown> = { ':amount': amount };
  let update = 'ADD #cur :amount';
  if (opts.countsCharge) {
    update += ', charges :one';
    values[':one'] = 1;
  }
  const cap = 'attribute_not_exists(#cur) OR #cur <= :headroom';
  const { killSwitch, enabledAgent } = opts;
  if (enabledAgent !== undefined) return enabledShardCredit(agentId, shard, update, names, values, cap, enabledAgent.precedence);
  if (killSwitch !== undefined) values[':keyHash'] = killSwitch;
  const item = {
    Update: {
      TableName: config().TABLE_NAME,
      Key: keys.agentBalanceShard(agentId, shard),
      UpdateExpression: `${update} SET agentId = if_not_exists(agentId, :agentId), #type = if_not_exists(#type, :type)`,
      ConditionExpression: killSwitch === undefined ? cap : `enabledKeyHash = :keyHash AND (${cap})`,
      ExpressionAttributeNames: { ...names, '#type': 'type' },
      ExpressionAttributeValues: { ...values, ':agentId': agentId, ':type': SHARD_TYPE, ':headroom': headroom(amount) },
      ...(killSwitch === undefined ? {} : { ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const }),
    },
  };
  if (killSwitch === undefined) return named(item, { onConditionFailed: () => new BalanceLimitError() });
  return named(item, {
    onConditionFailed: (old) => (switchedOn(old, killSwitch) ? new BalanceLimitError() : new AgentDisabledError()),
    precedence: (old) => (switchedOn(old, killSwitch) ? PRECEDENCE.base : PRECEDENCE.killSwitch),
  });
}

/** `shardCredit` for a payer's approval: the kill switch on for any key of the agent. */
function enabledShardCredit(
  agentId: string,
  shard: number,
  update: string,
  names: Record<string, string>,
  values: Record<string, unknown>,
  cap: string,
  precedence: number,
): NamedItem {
  return named(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.agentBalanceShard(agentId, shard),
        UpdateExpression: `${update} SET agentId = if_not_exists(agentId, :agentId), #type = if_not_exists(#type, :type)`,
        ConditionExpression: `attribute_exists(enabledKeyHash) AND (${cap})`,
        ExpressionAttributeNames: { ...names, '#type': 'type' },
        ExpressionAttributeValues: {
          ...values,
          ':agentId': agentId,
          ':type': SHARD_TYPE,
          ':headroom': headroom(values[':amount'] as Minor),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    {
      onConditionFailed: (old) => (typeof old?.enabledKeyHash === 'string' ? new BalanceLimitError() : new AgentDisabledError()),
      precedence: (old) => (typeof old?.enabledKeyHash === 'string' ? PRECEDENCE.base : precedence),
    },
  );
}

/**
 * A condition that the agent's kill switch is on (for any key) on one of its shards, writing
 * nothing: a payer's approval of a hold, which credits no shard yet, must still not go to a
 * disabled agent. Failed, it means AgentDisabledError at the precedence given.
 */
export function shardEnabledCheck(agentId: string, shard: number, precedence: number): NamedItem {
  return named(
    {
      ConditionCheck: {
        TableName: config().TABLE_NAME,
        Key: keys.agentBalanceShard(agentId, shard),
        ConditionExpression: 'attribute_exists(enabledKeyHash)',
      },
    },
    { onConditionFailed: () => new AgentDisabledError(), precedence },
  );
}

/** An agent item's kill switch as the shards copy it. */
export interface KillSwitch {
  agentId: string;
  /** The agent item's key hash. */
  keyHash: string;
  /** What the agent item says (`enabled === true`). */
  enabled: boolean;
  /** The agent item's key generation (agent.repository.ts): a rotation makes a higher one. */
  generation: number;
}

/**
 * The update that copies `state` onto one shard (creating it): `enabledKeyHash` set to the key
 * hash while enabled, removed while disabled, `killSwitchGen` (the agent item's key generation) set.
 * Unconditional: it is written only in a transaction that holds the agent item as the truth at
 * its commit (the item's own write, or the fan-out's ConditionCheck that it is unchanged).
 */
export function killSwitchShardUpdate(state: KillSwitch, shard: number): TransactItem {
  const set = 'SET killSwitchGen = :gen, agentId = if_not_exists(agentId, :agentId), #type = if_not_exists(#type, :type)';
  return {
    Update: {
      TableName: config().TABLE_NAME,
      Key: keys.agentBalanceShard(state.agentId, shard),
      UpdateExpression: state.enabled ? `${set}, enabledKeyHash = :keyHash` : `${set} REMOVE enabledKeyHash`,
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: {
        ':gen': state.generation,
        ':agentId': state.agentId,
        ':type': SHARD_TYPE,
        ...(state.enabled ? { ':keyHash': state.keyHash } : {}),
      },
    },
  };
}

/** Every shard's kill-switch update (the agent item's transactions carry these). */
export const killSwitchShardUpdates = (state: KillSwitch): TransactItem[] =>
  Array.from({ length: config().BALANCE_SHARDS }, (_, shard) => killSwitchShardUpdate(state, shard));

/**
 * Turns the kill switch off on one shard where it is on for `keyHash` alone: what is left to do
 * when that key's agent item is gone (moved by a rotation, which wrote the new key's copy itself,
 * or deleted by hand). Never touches another key's copy.
 */
export function killSwitchShardClear(agentId: string, keyHash: string, shard: number): SingleWrite {
  return {
    Update: {
      TableName: config().TABLE_NAME,
      Key: keys.agentBalanceShard(agentId, shard),
      UpdateExpression: 'REMOVE enabledKeyHash',
      ConditionExpression: 'enabledKeyHash = :keyHash',
      ExpressionAttributeValues: { ':keyHash': keyHash },
    },
  };
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

/** The keys of every balance shard of an agent. */
export const agentShardKeys = (agentId: string) =>
  Array.from({ length: config().BALANCE_SHARDS }, (_, i) => keys.agentBalanceShard(agentId, i));

/** Sums every shard of an agent (strongly consistent, one BatchGetItem). */
export async function readAgentLedger(agentId: string): Promise<AgentLedger> {
  return agentLedgerOf(await batchGetConsistent(agentShardKeys(agentId)));
}

/** An agent's ledger from its shard items as read (a shard never written is simply absent). */
export function agentLedgerOf(items: readonly Record<string, unknown>[]): AgentLedger {
  const shards: ShardState[] = items.map((item) => {
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
