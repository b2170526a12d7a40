/** Agent registration and the operator's enable/disable switch. */

import type { StoredReply } from '../../contracts/api';
import { decodeCursor, encodeCursor, isCount, pageLimit } from '../../contracts/cursor';
import type { ListAgentsQuery, RegisterAgentRequest } from '../../contracts/request.schemas';
import { type Registration, renderRegistration } from '../../contracts/settled-outcomes';
import type { Agent } from '../../core/agents';
import { AgentNameTakenError, StaleReadError } from '../../core/errors';
import { isId, newAgentId } from '../../core/ids';
import { AGENT_KEY_PREFIX, generateKey, hashKey } from '../../core/keys';
import type { Balances } from '../../core/users';
import { refuse } from '../../messages/refusal';
import { answerSeal } from '../../store/answer-seal';
import { readAgentLedger } from '../../store/charges/balance.repository';
import { getAgentById, type ListedAgent, listAgents, moveAgentKey, setAgentEnabled } from '../../store/identity/agent.repository';
import { createAgent } from '../../store/identity/agent-registration.repository';
import { AUTH_MESSAGES, clearAuthCache, forgetAgent } from '../auth';
import { creation } from '../idempotency';

/** The scope of registrations' idempotency records: no owner, so the key and the body are the proof. */
const REGISTRATION_SCOPE = 'public#register';

/**
 * Registers a disabled agent; the key is returned once and stored only as its SHA-256.
 *
 * With an Idempotency-Key (optional) a lost answer can be asked for again: the record is written
 * in the registration's own transaction and keeps the answer sealed (store/answer-seal.ts) for the
 * replay window. Registration has no caller to scope it to, so the record answers only the same
 * key AND the same body (name, email, website: its fingerprint), is stored under the key's hash,
 * and opens only with the key itself (docs/idempotency.md "Registration: the key is the proof").
 */
export function registerAgent(
  input: RegisterAgentRequest,
  opts: { idempotencyKey?: string | undefined } = {},
): Promise<Registration | StoredReply> {
  return creation(
    {
      scope: REGISTRATION_SCOPE,
      key: opts.idempotencyKey,
      request: { name: input.name, email: input.email, website: input.website },
      seal: answerSeal,
      render: renderRegistration,
    },
    async ({ now, record }) => {
      const apiKey = generateKey(AGENT_KEY_PREFIX);
      const agent: Agent = { id: newAgentId(), ...input, enabled: false, createdAt: now.toISOString(), keyHash: hashKey(apiKey) };
      const created: Registration = { agent, apiKey };
      try {
        await createAgent(agent, record(created));
      } catch (error) {
        if (error instanceof AgentNameTakenError) throw refuse('agentNameTaken');
        throw error;
      }
      return created;
    },
  );
}

/** The operator's switch: an agent enabled (may charge) or disabled; the auth cache forgets it here. */
export async function updateAgentEnabled(agentId: string | undefined, enabled: boolean): Promise<Agent> {
  if (!isId('agent', agentId)) throw refuse('agentNotFound');
  const agent = await setAgentEnabled(agentId, enabled);
  if (!agent) throw refuse('agentNotFound');
  clearAuthCache();
  return agent;
}

/**
 * POST /api/v1/agents/keys/rotate: a new agent key, shown once. The agent item moves to the new
 * key's hash (store `moveAgentKey`), so the old key stops moving money at once in every container
 * (each money movement's kill switch checks the item of the key it was made with) and stops
 * authenticating at once here, within the auth cache's lifetime elsewhere for reads. `enabled` is
 * carried over: a disabled agent may rotate (a leaked key is why it was disabled) and stays
 * disabled. The old key is checked with a fresh read, never the cache.
 */
export async function rotateAgentKey(oldKeyHash: string): Promise<RotatedAgentKey> {
  const apiKey = generateKey(AGENT_KEY_PREFIX);
  for (let round = 0; round < 3; round++) {
    try {
      const agent = await moveAgentKey(oldKeyHash, hashKey(apiKey), new Date());
      if (!agent) throw refuse(AUTH_MESSAGES.rotateKey);
      forgetAgent(oldKeyHash);
      return { apiKey, agentId: agent.id, enabled: agent.enabled };
    } catch (error) {
      if (!(error instanceof StaleReadError)) throw error;
    }
  }
  throw refuse('agentKeyRotatedConcurrently');
}

/** Which agents a list holds: the state filter a cursor was made with, so its pages stay one list. */
type AgentFilter = 'enabled' | 'disabled' | 'all';

const filterOf = (enabled: ListAgentsQuery['enabled']): AgentFilter | undefined =>
  enabled === undefined ? undefined : enabled === 'true' ? 'enabled' : 'disabled';

/** An agent-list cursor: the last agent id read, the page size and the filter. */
function readAgentCursor(text: string): { before: string; limit: number; filter: AgentFilter } {
  return decodeCursor(text, ([before, limit, filter, ...rest]) =>
    rest.length === 0 &&
    isId('agent', typeof before === 'string' ? before : undefined) &&
    isCount(limit) &&
    (filter === 'enabled' || filter === 'disabled' || filter === 'all')
      ? { before: before as string, limit, filter }
      : undefined,
  );
}

/**
 * GET /api/v1/admin/agents?enabled=&limit=&cursor=: agents newest first, those that may charge
 * (`enabled=true`), those that may not (`false`: waiting to be enabled, or disabled), or both. A
 * cursor carries its limit and filter: an explicit other one beside it is 400 `cursor is invalid`.
 */
export async function listAgentsForOperator(query: ListAgentsQuery): Promise<AgentPage> {
  const cursor = query.cursor ? readAgentCursor(query.cursor) : undefined;
  const limit = pageLimit(query.limit, cursor?.limit);
  const asked = filterOf(query.enabled);
  if (cursor && asked !== undefined && asked !== cursor.filter) throw refuse('cursorInvalid');
  const filter = cursor?.filter ?? asked ?? 'all';
  const page = await listAgents({
    limit,
    ...(filter === 'all' ? {} : { enabled: filter === 'enabled' }),
    ...(cursor ? { before: cursor.before } : {}),
  });
  return { agents: page.agents, nextCursor: page.lastId ? encodeCursor([page.lastId, limit, filter]) : null };
}

/** An agent as the operator sees it: its public fields and its withdrawable balance. */
export async function readAgent(agentId: string | undefined): Promise<{ agent: Agent; balances: Balances }> {
  if (!isId('agent', agentId)) throw refuse('agentNotFound');
  const agent = await getAgentById(agentId);
  if (!agent) throw refuse('agentNotFound');
  const ledger = await readAgentLedger(agent.id);
  return { agent, balances: ledger.balances };
}

/** A rotated agent key, shown once, and the agent it belongs to (its state carried over). */
export interface RotatedAgentKey {
  apiKey: string;
  agentId: string;
  enabled: boolean;
}

/** A page of agents, newest first, and the cursor of the next (null on the last). */
export interface AgentPage {
  agents: ListedAgent[];
  nextCursor: string | null;
}
