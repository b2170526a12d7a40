/**
 * The kill switch's writes to an agent's balance shards, for the table stream's fan-out
 * (functions/kill-switch/fanout.ts) and the operator's backfill: the fan-out decides what to copy
 * and when to read again; this file is where that reaches DynamoDB.
 */
import { config } from '../../config';
import { killSwitchShardClear, killSwitchShardUpdates } from '../charges/balance.repository';
import { conditionalWrite, named, outcome, transactWrite } from '../transact';
import { agentUnchanged, killSwitchOf } from './agent.repository';

/**
 * Writes the kill switch of agent item `item` (as read) to every shard in ONE transaction, with a
 * check that the item is still as read (and its list entry mended, `agentUnchanged`). False when
 * the item changed since: the caller reads it again.
 */
export async function copyKillSwitch(item: Record<string, unknown>): Promise<boolean> {
  const result = await transactWrite<'moved'>([
    named(agentUnchanged(item), { onConditionFailed: () => outcome('moved' as const) }),
    ...killSwitchShardUpdates(killSwitchOf(item)),
  ]);
  return result.committed;
}

/**
 * Turns the kill switch off on every shard where it is on for `keyHash` alone (its agent item is
 * gone). A refused condition is a shard that has another key's copy, or none: nothing to do there.
 */
export async function clearKillSwitch(agentId: string, keyHash: string): Promise<void> {
  await Promise.all(
    Array.from({ length: config().BALANCE_SHARDS }, (_, shard) =>
      conditionalWrite(killSwitchShardClear(agentId, keyHash, shard), () => outcome('not this key')),
    ),
  );
}
