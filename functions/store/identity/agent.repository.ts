/**
 * Agents. The agent item is keyed by the SHA-256 of the agent's key so authentication is one
 * strongly consistent read; GSI1 finds the same item by agentId (admin API, console); GSI2 lists
 * agents by their `enabled` flag (the operator's list: who waits to be enabled).
 * Operators enable an agent by setting `enabled` to true on this item (docs/operating/runbooks.md, "Enable (or disable) an agent").
 *
 * The kill switch a charge checks is a copy of `enabled` and the key hash on each of the agent's
 * balance shards (balance.repository.ts): every write of the agent item here writes the shards in
 * the same transaction, and the table stream's fan-out (functions/kill-switch/fanout.ts) copies an
 * operator's edit in the console. `keyGeneration` (absent: 0) counts the item's key rotations (the
 * shards keep the generation of their copy: `killSwitchGen`).
 */
import { GetCommand, QueryCommand, ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import type { Agent } from '../../core/agents';
import { AgentDisabledError, StaleReadError } from '../../core/errors';
import { type KillSwitch, killSwitchShardUpdates } from '../charges/balance.repository';
import { db } from '../client';
import { GSI1, GSI2, keys } from '../table';
import { type NamedItem, named, outcome, PRECEDENCE, type TransactItem, transactWrite } from '../transact';

/** Finds the agent item's primary key by agentId through GSI1. */
async function findAgentKeyById(agentId: string): Promise<{ PK: string; SK: string } | undefined> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      IndexName: GSI1.indexName,
      KeyConditionExpression: 'GSI1PK = :pk AND GSI1SK = :sk',
      ExpressionAttributeValues: { ':pk': keys.agentIndex(agentId).GSI1PK, ':sk': 'AGENT' },
      Limit: 1,
    }),
  );
  const item = out.Items?.[0];
  return item ? { PK: String(item.PK), SK: String(item.SK) } : undefined;
}

/** The agent with this id (index lookup, then a strongly consistent read); undefined when none. */
export async function getAgentById(agentId: string): Promise<Agent | undefined> {
  const key = await findAgentKeyById(agentId);
  if (!key) return undefined;
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: key, ConsistentRead: true }));
  return out.Item ? toAgent(out.Item) : undefined;
}

/**
 * Sets `enabled`, and the shards' copy of it in the same transaction (so the admin PATCH stops or
 * starts charges at once, not after the stream's fan-out); undefined when no such agent.
 */
export async function setAgentEnabled(agentId: string, enabled: boolean): Promise<Agent | undefined> {
  const key = await findAgentKeyById(agentId);
  if (!key) return undefined;
  const table = config().TABLE_NAME;
  const out = await db().send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }));
  if (!out.Item) return undefined;
  const now = new Date().toISOString();
  const after = { ...out.Item, enabled, enabledChangedAt: now, ...keys.agentStateIndex(agentId, enabled) };
  const result = await transactWrite<'gone'>([
    named(
      {
        Update: {
          TableName: table,
          Key: key,
          // enabledChangedAt dates the agent.enabled/disabled event the item's stream record
          // produces (functions/webhooks/dispatcher.ts); a console edit without it is dated by the stream.
          // The operator's list (GSI2) moves with the flag, in the same write.
          UpdateExpression: 'SET enabled = :enabled, enabledChangedAt = :now, GSI2PK = :listed, GSI2SK = :agentId',
          // The item is still this key's, of the generation read (a rotation in between moved it:
          // its shards' copy is the new key's now, and this one is no longer the agent's item).
          ConditionExpression:
            generationOf(out.Item) === 0
              ? 'attribute_exists(PK) AND (attribute_not_exists(keyGeneration) OR keyGeneration = :gen)'
              : 'keyGeneration = :gen',
          ExpressionAttributeValues: {
            ':enabled': enabled,
            ':now': now,
            ':gen': generationOf(out.Item),
            ':listed': keys.agentStatePartition(enabled),
            ':agentId': agentId,
          },
        },
      },
      { onConditionFailed: () => outcome('gone' as const) },
    ),
    ...killSwitchShardUpdates(killSwitchOf(after)),
  ]);
  return result.committed ? toAgent(after) : undefined;
}

/**
 * Moves the agent item from the old key's hash to the new one's in one transaction: the old item
 * deleted (conditioned on `enabled` being what was read, so an operator's flip in between is
 * never lost: StaleReadError, read again), the same item put under the new key, `enabled` and
 * every other attribute carried over, its GSI1 entry (found by agentId) with it. So there is still
 * exactly one agent item per agent, and every money movement that carries the old key's kill
 * switch fails at once (the item it checks is gone; the shards' copy, written in the same
 * transaction, names the new key's hash under the next key generation). Undefined when the old
 * key has no item.
 */
export async function moveAgentKey(oldKeyHash: string, newKeyHash: string, now: Date): Promise<Agent | undefined> {
  const table = config().TABLE_NAME;
  const out = await db().send(new GetCommand({ TableName: table, Key: keys.agent(oldKeyHash), ConsistentRead: true }));
  const old = out.Item;
  if (!old) return undefined;
  const moved = { ...old, ...keys.agent(newKeyHash), keyRotatedAt: now.toISOString(), keyGeneration: generationOf(old) + 1 };
  // Either condition failing means the item moved on since it was read.
  const stale = { onConditionFailed: () => new StaleReadError('agent item') };
  await transactWrite([
    named(
      {
        Delete: {
          TableName: table,
          Key: keys.agent(oldKeyHash),
          ConditionExpression: old.enabled === undefined ? 'attribute_not_exists(enabled)' : 'enabled = :enabled',
          ...(old.enabled === undefined ? {} : { ExpressionAttributeValues: { ':enabled': old.enabled } }),
        },
      },
      stale,
    ),
    named({ Put: { TableName: table, Item: moved, ConditionExpression: 'attribute_not_exists(PK)' } }, stale),
    ...killSwitchShardUpdates(killSwitchOf(moved)),
  ]);
  return toAgent(moved);
}

const AGENT_KEY_PK_PREFIX = keys.agent('').PK;

/** The agent item's key generation: 0 until its first rotation. */
const generationOf = (item: Record<string, unknown>): number => (typeof item.keyGeneration === 'number' ? item.keyGeneration : 0);

/** The kill switch an agent item stands for, as its shards copy it. */
export function killSwitchOf(item: Record<string, unknown>): KillSwitch {
  return {
    agentId: String(item.agentId),
    keyHash: String(item.PK).slice(AGENT_KEY_PK_PREFIX.length),
    enabled: item.enabled === true,
    generation: generationOf(item),
  };
}

/**
 * Every agent item's key hash and agentId, a page at a time: a Scan of the whole table (the
 * operator's kill-switch backfill, docs/operating/runbooks.md; no function is granted Scan but the audit).
 */
export async function* scanAgentKeys(): AsyncGenerator<{ keyHash: string; agentId: string }[]> {
  let start: Record<string, unknown> | undefined;
  do {
    const out: ScanCommandOutput = await db().send(
      new ScanCommand({
        TableName: config().TABLE_NAME,
        FilterExpression: 'begins_with(PK, :prefix) AND #type = :type',
        ProjectionExpression: 'PK, agentId',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':prefix': AGENT_KEY_PK_PREFIX, ':type': 'Agent' },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    yield (out.Items ?? []).map((item) => ({ keyHash: String(item.PK).slice(AGENT_KEY_PK_PREFIX.length), agentId: String(item.agentId) }));
    start = out.LastEvaluatedKey;
  } while (start);
}

/** An agent as the operator's list reads it from the index: its public fields only, never the key hash. */
export type ListedAgent = Omit<Agent, 'keyHash'>;

/**
 * A page of agents, newest first: one Query of the index partition of each state asked for (GSI2,
 * `keys.agentStateIndex`), merged by id (ids are ULIDs: creation order), continuing below `before`.
 * Never a Scan: the list costs what it returns. An entry whose `enabled` no longer matches its
 * partition (an edit in the console the fan-out has not yet mended, within the stream's delay) is
 * read, counted in the page and not returned: it is listed under its new state once mended.
 * `lastId` is the last agent read when more may follow.
 */
export async function listAgents(opts: {
  enabled?: boolean;
  limit: number;
  before?: string;
}): Promise<{ agents: ListedAgent[]; lastId: string | undefined }> {
  const states = opts.enabled === undefined ? [true, false] : [opts.enabled];
  const read = (
    await Promise.all(
      states.map(async (enabled) => {
        const out = await db().send(
          new QueryCommand({
            TableName: config().TABLE_NAME,
            IndexName: GSI2.indexName,
            KeyConditionExpression: opts.before ? 'GSI2PK = :pk AND GSI2SK < :before' : 'GSI2PK = :pk',
            ExpressionAttributeValues: { ':pk': keys.agentStatePartition(enabled), ...(opts.before ? { ':before': opts.before } : {}) },
            // What the list shows, and no more: the index projects the whole item, key hash included.
            ProjectionExpression: '#id, #name, #email, #website, #enabled, #createdAt',
            ExpressionAttributeNames: {
              '#id': 'agentId',
              '#name': 'name',
              '#email': 'email',
              '#website': 'website',
              '#enabled': 'enabled',
              '#createdAt': 'createdAt',
            },
            ScanIndexForward: false,
            Limit: opts.limit + 1,
          }),
        );
        return (out.Items ?? []).map((item) => ({ agent: toListedAgent(item), listedAs: enabled }));
      }),
    )
  )
    .flat()
    .sort((a, b) => (a.agent.id < b.agent.id ? 1 : a.agent.id > b.agent.id ? -1 : 0));
  const page = read.slice(0, opts.limit);
  return {
    agents: page.filter((entry) => entry.agent.enabled === entry.listedAs).map((entry) => entry.agent),
    lastId: read.length > opts.limit ? page[page.length - 1]?.agent.id : undefined,
  };
}

function toListedAgent(item: Record<string, unknown>): ListedAgent {
  return {
    id: String(item.agentId),
    name: String(item.name),
    email: String(item.email),
    website: String(item.website),
    enabled: item.enabled === true,
    createdAt: String(item.createdAt),
  };
}

/** The agent item of this key hash (strongly consistent read); undefined when it is gone. */
export async function readAgentItem(keyHash: string): Promise<Record<string, unknown> | undefined> {
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.agent(keyHash), ConsistentRead: true }));
  return out.Item;
}

/** Whether the agent item's entry in the operator's list (GSI2) is the one its `enabled` calls for. */
export function listedRight(item: Record<string, unknown>): boolean {
  const listed = keys.agentStateIndex(String(item.agentId), item.enabled === true);
  return item.GSI2PK === listed.GSI2PK && item.GSI2SK === listed.GSI2SK;
}

/**
 * A ConditionCheck that the agent item `read` is still as it was read, in what its kill switch
 * copies: there, `enabled` the same, the same key generation. The fan-out's copy carries it, so a
 * copy never lands after a newer change of the item (functions/kill-switch/fanout.ts). When the
 * item's entry in the operator's list (GSI2) does not match its `enabled`, the check is an Update
 * under the same condition that mends the entry.
 */
export function agentUnchanged(read: Record<string, unknown>): TransactItem {
  const generation = generationOf(read);
  const sameGeneration = generation === 0 ? '(attribute_not_exists(keyGeneration) OR keyGeneration = :gen)' : 'keyGeneration = :gen';
  // `enabled` as the console may leave it: true, false, absent or not a boolean; only true enables.
  const sameEnabled = read.enabled === true ? 'enabled = :on' : '(attribute_not_exists(enabled) OR enabled <> :on)';
  const condition = {
    TableName: config().TABLE_NAME,
    Key: { PK: String(read.PK), SK: String(read.SK) },
    ConditionExpression: `attribute_exists(PK) AND ${sameEnabled} AND ${sameGeneration}`,
    ExpressionAttributeValues: { ':on': true, ':gen': generation },
  };
  if (listedRight(read)) return { ConditionCheck: condition };
  const listed = keys.agentStateIndex(String(read.agentId), read.enabled === true);
  // Listed under the other state (an edit in the console), or not at all (an agent from before the
  // list): the same condition, and the entry set to what `enabled` says. Its own stream record
  // comes back here, finds the entry right, and only checks.
  return {
    Update: {
      ...condition,
      UpdateExpression: 'SET GSI2PK = :listed, GSI2SK = :agentId',
      ExpressionAttributeValues: { ...condition.ExpressionAttributeValues, ':listed': listed.GSI2PK, ':agentId': listed.GSI2SK },
    },
  };
}

/**
 * The kill switch on the agent item itself, as a transaction item: it holds only while the agent
 * item of this key says `enabled: true`. The agent's rarer money movements carry it (release,
 * refund, withdrawal), so an operator's switch (or a key rotation, which moves the item) stops
 * them at once, whatever an auth cache says; charges and captures carry the shard's copy instead
 * (balance.repository.ts `shardCredit` with `killSwitch`). Failed, it means AgentDisabledError:
 * after a replay, before any other refusal.
 */
export function agentEnabledCheck(keyHash: string): NamedItem {
  return named(
    {
      ConditionCheck: {
        TableName: config().TABLE_NAME,
        Key: keys.agent(keyHash),
        ConditionExpression: 'enabled = :on',
        ExpressionAttributeValues: { ':on': true },
      },
    },
    { onConditionFailed: () => new AgentDisabledError(), precedence: PRECEDENCE.killSwitch },
  );
}

/** The agent item's attributes, from the Agent (createAgent writes them; agent-registration.repository.ts). */
export function agentAttributes(agent: Agent) {
  return {
    agentId: agent.id,
    name: agent.name,
    email: agent.email,
    website: agent.website,
    enabled: agent.enabled,
    createdAt: agent.createdAt,
  };
}

export function toAgent(item: Record<string, unknown>): Agent {
  return {
    id: String(item.agentId),
    name: String(item.name),
    email: String(item.email),
    website: String(item.website),
    // Operators edit this in the console: accept a boolean, and nothing else, as enabled.
    enabled: item.enabled === true,
    createdAt: String(item.createdAt),
    keyHash: String(item.PK).slice(AGENT_KEY_PK_PREFIX.length),
    ...(typeof item.enabledChangedAt === 'string' ? { enabledChangedAt: item.enabledChangedAt } : {}),
  };
}
