/** Agent registration and the operator's enable/disable switch. */
import type { RegisterAgentRequest } from '../api/request.schemas';
import { AgentNameTakenError, ConflictError, NotFoundError } from '../core/errors';
import { isId, newAgentId } from '../core/ids';
import { AGENT_KEY_PREFIX, generateKey, hashKey } from '../core/keys';
import type { HttpResult } from '../http/response';
import { createAgent, getAgentById, setAgentEnabled } from '../store/agent.repository';
import { readAgentLedger } from '../store/balance.repository';
import { clearAuthCache } from './auth';
import { agentView, balancesView } from './views';

export const REGISTRATION_MESSAGE =
  'Agent registered. Store the apiKey now: it is shown only once. The agent is disabled until the ' +
  'service operator verifies it; contact the operator with your agentId to request activation.';

/** Registers a disabled agent; the key is returned once and stored only as its SHA-256. */
export async function registerAgent(input: RegisterAgentRequest): Promise<HttpResult> {
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

export async function updateAgentEnabled(agentId: string | undefined, enabled: boolean): Promise<HttpResult> {
  if (!isId('agent', agentId)) throw new NotFoundError('agent not found');
  const agent = await setAgentEnabled(agentId, enabled);
  if (!agent) throw new NotFoundError('agent not found');
  clearAuthCache();
  return { statusCode: 200, body: agentView(agent) };
}

/** An agent as the operator sees it: its public fields and its withdrawable balance. */
export async function readAgent(agentId: string | undefined): Promise<HttpResult> {
  if (!isId('agent', agentId)) throw new NotFoundError('agent not found');
  const agent = await getAgentById(agentId);
  if (!agent) throw new NotFoundError('agent not found');
  const ledger = await readAgentLedger(agent.id);
  return { statusCode: 200, body: { ...agentView(agent), balances: balancesView(ledger.balances) } };
}
