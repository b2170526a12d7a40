/** Agent registration and the operator's enable/disable switch. */

import type { ApiResult } from '../contracts/api';
import type { RegisterAgentRequest } from '../contracts/request.schemas';
import { agentView, balancesView } from '../contracts/views';
import { AgentNameTakenError, ConflictError, NotFoundError, StaleReadError, UnauthorizedError } from '../core/errors';
import { isId, newAgentId } from '../core/ids';
import { AGENT_KEY_PREFIX, generateKey, hashKey } from '../core/keys';
import { getAgentById, moveAgentKey, setAgentEnabled } from '../store/agent.repository';
import { createAgent } from '../store/agent-registration.repository';
import { readAgentLedger } from '../store/balance.repository';
import { AUTH_MESSAGES, clearAuthCache, forgetAgent } from './auth';

export const REGISTRATION_MESSAGE =
  'Agent registered. Store the apiKey now: it is shown only once. The agent is disabled until the ' +
  'service operator verifies it; contact the operator with your agentId to request activation.';

/** Registers a disabled agent; the key is returned once and stored only as its SHA-256. */
export async function registerAgent(input: RegisterAgentRequest): Promise<ApiResult> {
  const apiKey = generateKey(AGENT_KEY_PREFIX);
  const agent = { id: newAgentId(), ...input, enabled: false, createdAt: new Date().toISOString(), keyHash: hashKey(apiKey) };
  try {
    await createAgent(agent);
  } catch (error) {
    if (error instanceof AgentNameTakenError) throw new ConflictError('agent name already taken');
    throw error;
  }
  return { statusCode: 201, body: { message: REGISTRATION_MESSAGE, apiKey, enabled: false, agentId: agent.id } };
}

export async function updateAgentEnabled(agentId: string | undefined, enabled: boolean): Promise<ApiResult> {
  if (!isId('agent', agentId)) throw new NotFoundError('agent not found');
  const agent = await setAgentEnabled(agentId, enabled);
  if (!agent) throw new NotFoundError('agent not found');
  clearAuthCache();
  return { statusCode: 200, body: agentView(agent) };
}

/**
 * POST /api/v1/agents/keys/rotate: a new agent key, shown once. The agent item moves to the new
 * key's hash (store `moveAgentKey`), so the old key stops moving money at once in every container
 * (each money movement's kill switch checks the item of the key it was made with) and stops
 * authenticating at once here, within the auth cache's lifetime elsewhere for reads. `enabled` is
 * carried over: a disabled agent may rotate (a leaked key is why it was disabled) and stays
 * disabled. The old key is checked with a fresh read, never the cache.
 */
export async function rotateAgentKey(oldKeyHash: string): Promise<ApiResult> {
  const apiKey = generateKey(AGENT_KEY_PREFIX);
  for (let round = 0; round < 3; round++) {
    try {
      const agent = await moveAgentKey(oldKeyHash, hashKey(apiKey), new Date());
      if (!agent) throw new UnauthorizedError(AUTH_MESSAGES.rotateKey);
      forgetAgent(oldKeyHash);
      return { statusCode: 200, body: { apiKey, agentId: agent.id, enabled: agent.enabled } };
    } catch (error) {
      if (!(error instanceof StaleReadError)) throw error;
    }
  }
  throw new ConflictError('agent key was rotated concurrently, retry with the new key');
}

/** An agent as the operator sees it: its public fields and its withdrawable balance. */
export async function readAgent(agentId: string | undefined): Promise<ApiResult> {
  if (!isId('agent', agentId)) throw new NotFoundError('agent not found');
  const agent = await getAgentById(agentId);
  if (!agent) throw new NotFoundError('agent not found');
  const ledger = await readAgentLedger(agent.id);
  return { statusCode: 200, body: { ...agentView(agent), balances: balancesView(ledger.balances) } };
}
