/**
 * Agents. The agent item is keyed by the SHA-256 of the agent's key so authentication is one
 * strongly consistent read; GSI1 finds the same item by agentId (admin API, console).
 * Operators enable an agent by setting `enabled` to true on this item (README, "Operating").
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import type { Agent } from '../core/agents';
import { AgentDisabledError, AgentNameTakenError, StaleReadError } from '../core/errors';
import { nameSkeleton } from '../core/text';
import { db } from './client';
import { GSI1, keys } from './table';
import { type NamedItem, named, PRECEDENCE, transactWrite } from './transact';

/** Creates a disabled agent and reserves its name (its look-alike skeleton) in one transaction. */
export async function createAgent(agent: Agent): Promise<void> {
  const table = config().TABLE_NAME;
  await transactWrite([
    named(
      {
        Put: {
          TableName: table,
          Item: { ...keys.agentName(nameSkeleton(agent.name)), type: 'AgentName', agentId: agent.id },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      { onConditionFailed: () => new AgentNameTakenError() },
    ),
    {
      Put: {
        TableName: table,
        Item: { ...keys.agent(agent.keyHash), ...keys.agentIndex(agent.id), type: 'Agent', ...agentAttributes(agent) },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
  ]);
}

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

/** Sets `enabled`; undefined when no such agent. */
export async function setAgentEnabled(agentId: string, enabled: boolean): Promise<Agent | undefined> {
  const key = await findAgentKeyById(agentId);
  if (!key) return undefined;
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: config().TABLE_NAME,
        Key: key,
        // enabledChangedAt dates the agent.enabled/disabled event the item's stream record
        // produces (functions/webhooks/dispatcher.ts); a console edit without it is dated by the stream.
        UpdateExpression: 'SET enabled = :enabled, enabledChangedAt = :now',
        // The index entry may outlive the item for a moment; never create a half item.
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':enabled': enabled, ':now': new Date().toISOString() },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes ? toAgent(out.Attributes) : undefined;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

/**
 * Moves the agent item from the old key's hash to the new one's in one transaction: the old item
 * deleted (conditioned on `enabled` being what was read, so an operator's flip in between is
 * never lost: StaleReadError, read again), the same item put under the new key, `enabled` and
 * every other attribute carried over, its GSI1 entry (found by agentId) with it. So there is still
 * exactly one agent item per agent, and every money movement that carries the old key's kill
 * switch fails at once (the item it checks is gone). Undefined when the old key has no item.
 */
export async function moveAgentKey(oldKeyHash: string, newKeyHash: string, now: Date): Promise<Agent | undefined> {
  const table = config().TABLE_NAME;
  const out = await db().send(new GetCommand({ TableName: table, Key: keys.agent(oldKeyHash), ConsistentRead: true }));
  const old = out.Item;
  if (!old) return undefined;
  const moved = { ...old, ...keys.agent(newKeyHash), keyRotatedAt: now.toISOString() };
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
  ]);
  return toAgent(moved);
}

const AGENT_KEY_PK_PREFIX = keys.agent('').PK;

/**
 * The kill switch, as a transaction item: it holds only while the agent item of this key says
 * `enabled: true`. Every money movement of an agent carries it, so an operator's switch (or a
 * key rotation, which moves the item) stops the money at once, whatever an auth cache says.
 * Failed, it means AgentDisabledError: after a replay, before any other refusal.
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

function agentAttributes(agent: Agent) {
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
  };
}
