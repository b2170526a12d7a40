/** Agent registration and the operator's enable/disable switch. */
import { ConflictError, NotFoundError } from '../core/errors';
import { newAgentId } from '../core/ids';
import { AGENT_KEY_PREFIX, generateKey, hashKey } from '../core/keys';
import type { HttpResult } from '../http/response';
import { AgentNameTakenError, createAgent, setAgentEnabled } from '../store/agent.repository';
import { clearAuthCache } from './auth';
import { agentView } from './views';

export const REGISTRATION_MESSAGE =
  'Agent registered. Store the apiKey now: it is shown only once. The agent is disabled until the ' +
  'service operator verifies it; contact the operator with your agentId to request activation.';

/** Registers a disabled agent; the key is returned once and stored only as its SHA-256. */
export async function registerAgent(input: { name: string; email: string; website: string }): Promise<HttpResult> {
  const apiKey = generateKey(AGENT_KEY_PREFIX);
  const agent = { id: newAgentId(), ...input, enabled: false, createdAt: new Date().toISOString() };
  try {
    await createAgent(agent, hashKey(apiKey));
  } catch (error) {
    if (error instanceof AgentNameTakenError) throw new ConflictError('agent name already taken');
    throw error;
  }
  return { statusCode: 201, body: { message: REGISTRATION_MESSAGE, apiKey, enabled: false, agentId: agent.id } };
}

const AGENT_ID = /^a[0-9a-z]{26}$/;

export async function updateAgentEnabled(agentId: string | undefined, enabled: boolean): Promise<HttpResult> {
  if (!agentId || !AGENT_ID.test(agentId)) throw new NotFoundError('agent not found');
  const agent = await setAgentEnabled(agentId, enabled);
  if (!agent) throw new NotFoundError('agent not found');
  clearAuthCache();
  return { statusCode: 200, body: agentView(agent) };
}
