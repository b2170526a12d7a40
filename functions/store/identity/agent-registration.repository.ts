/**
 * Registering an agent: the agent item and the reservation of its name's look-alike skeleton in
 * one transaction. Apart from agent.repository.ts so that only what registers agents bundles the
 * look-alike table (core/name-skeleton.ts, ~20 KB): every API function reads agents, few create them.
 */
import { config } from '../../config';
import type { Agent } from '../../core/agents';
import { AgentNameTakenError } from '../../core/errors';
import { nameSkeleton } from '../../core/name-skeleton';
import { killSwitchShardUpdates } from '../charges/balance.repository';
import { keys } from '../table';
import { type NamedItem, named, transactWrite } from '../transact';
import { agentAttributes } from './agent.repository';

/**
 * Creates a disabled agent and reserves its name (its look-alike skeleton) in one transaction. A
 * disabled agent needs no shards (a charge's condition fails on a missing one just as on one
 * switched off; the enabling writes them), so registration, a public route, writes no balance
 * item; an agent created enabled (tests, tools) gets its shards' copy of the switch here.
 * `idempotency`: the registration's idempotency record (use-cases/identity/agents.ts), whose replay
 * outranks the name's refusal.
 */
export async function createAgent(agent: Agent, idempotency?: NamedItem): Promise<void> {
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
        Item: {
          ...keys.agent(agent.keyHash),
          ...keys.agentIndex(agent.id),
          ...keys.agentStateIndex(agent.id, agent.enabled),
          type: 'Agent',
          ...agentAttributes(agent),
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    ...(agent.enabled ? killSwitchShardUpdates({ agentId: agent.id, keyHash: agent.keyHash, enabled: true, generation: 0 }) : []),
    ...(idempotency ? [idempotency] : []),
  ]);
}
