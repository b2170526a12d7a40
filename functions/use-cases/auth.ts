/**
 * Authentication. Keys arrive in headers, are shape-checked, hashed, and looked up by hash.
 * Results are cached in the container for at most AUTH_CACHE_TTL_MS (≤ 30 s); "unknown" answers
 * for at most 5 s, "disabled" for 1 s. So disabling an agent takes effect within 30 s for reads
 * (money movements: the kill switch, at once or within the stream's fan-out), enabling within
 * 1 s plus the fan-out: inside the 2 s an operator's flip in the console is given (DESIGN §18).
 * The writes that hand an agent key something, or spend the service's money, check the agent item
 * themselves, so a disable or a key rotation takes effect on them at once: release, refund and
 * withdrawal (the kill switch's ConditionCheck), the grant request's claim, the agent webhook
 * create (ConditionCheck in its transaction) and its delete and test ping (a strongly consistent
 * read first), and x402 settle (a strongly consistent read before the hot wallet signs, and the
 * ConditionCheck in the credit). A forgotten cached answer is looked up again on the next request.
 * A key never reaches a log line or an error message.
 */
import { config, onConfigReset } from '../config';
import type { ApiRequest } from '../contracts/api';
import type { Agent } from '../core/agents';
import { AGENT_KEY_PREFIX, GRANT_KEY_PREFIX, hashKey, looksLikeKey, secretsEqual, USER_KEY_PREFIX } from '../core/keys';
import { TtlCache } from '../core/ttl-cache';
import { AUTH_MESSAGES, type AuthRefusal, MISSING_KEY_HEADER } from '../messages/credentials';
import { refuse } from '../messages/refusal';
import { readAgentItem } from '../store/identity/agent.repository';
import { type GrantKeyTerms, lookupCredentials } from '../store/identity/credentials.repository';
import { adminKey } from './admin-key';

export { AUTH_MESSAGES, type AuthRefusal, MISSING_KEY_HEADER } from '../messages/credentials';

/**
 * Whether a key header carries anything. Absent, empty or blank, the request is told which header
 * to send (`missing x-agent-key header`): a newcomer who sent `x-api-key`, or no header at all,
 * learns the name; a key that is there but wrong keeps the route's own message.
 */
export function keySent(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

type CachedAgent = { agent: Agent | null };
type CachedUser = { userId: string | null };
/** A grant key's terms (which never change); whether it is still active, the charge's transaction decides. */
type CachedGrant = { grant: GrantKeyTerms | null };

const NEGATIVE_TTL_MS = 5_000;
/** A disabled agent's answer: short, so an enabling (console flip, 2 s to take effect) is not hidden behind it. */
const DISABLED_TTL_MS = 1_000;

let agentCache: TtlCache<CachedAgent> | undefined;
let userCache: TtlCache<CachedUser> | undefined;
let grantCache: TtlCache<CachedGrant> | undefined;

function caches() {
  if (!agentCache || !userCache || !grantCache) {
    agentCache = new TtlCache<CachedAgent>(config().AUTH_CACHE_TTL_MS);
    userCache = new TtlCache<CachedUser>(config().AUTH_CACHE_TTL_MS);
    grantCache = new TtlCache<CachedGrant>(config().AUTH_CACHE_TTL_MS);
  }
  return { agents: agentCache, users: userCache, grants: grantCache };
}

/** Forget one agent key's cached answer (its money movement was refused by the kill switch). */
export function forgetAgent(keyHash: string): void {
  agentCache?.delete(keyHash);
}

/**
 * The agent as its item says it is now, not as this container's cache remembers it (up to 30 s old
 * after a disable, or a rotation, which moves the item to the new key's hash): one strongly
 * consistent GetItem by the key's hash, for a route that must not act on a stale answer and has no
 * transaction of its own to carry the kill switch first (x402 settle before the hot wallet signs;
 * agent webhook delete and test). Refused with the route's `message`, the cached answer forgotten.
 */
export async function requireCurrentAgent(agent: Pick<Agent, 'id' | 'keyHash'>, message: AuthRefusal): Promise<void> {
  const item = await readAgentItem(agent.keyHash);
  if (item?.enabled === true && item.agentId === agent.id) return;
  forgetAgent(agent.keyHash);
  throw refuse(message);
}

/** Forget one user key's cached answer (a charge found it rotated, or its grant revoked or expired). */
export function forgetUserKey(keyHash: string): void {
  userCache?.delete(keyHash);
  grantCache?.delete(keyHash);
}

/** Forget every cached answer: the container that flips `enabled` sees it at once. */
export function clearAuthCache(): void {
  agentCache = undefined;
  userCache = undefined;
  grantCache = undefined;
}
onConfigReset(clearAuthCache);

export interface ChargeParties {
  agent: Agent;
  userId: string;
  /** The user key's hash: a charge is conditioned on it still being the user's (an account key). */
  userKeyHash: string;
  /** The grant, when the user key is a grant key (`ug_live_`): the charge is conditioned on the grant item instead. */
  grant?: GrantKeyTerms;
}

/**
 * Resolves an agent key and, optionally, a user key: an account key, or a grant key (its terms).
 * Cold caches cost one BatchGetItem for both. The agent is checked first: a bad agent key is
 * reported even when the user key is bad too. A grant key of another agent is 403; one past its
 * `expiresAt` is 401 here, and a revoked one by the charge's own transaction (never a cache).
 */
export async function authenticate(req: ApiRequest, agentMessage: AuthRefusal, withUser: false): Promise<{ agent: Agent }>;
export async function authenticate(req: ApiRequest, agentMessage: AuthRefusal, withUser: true): Promise<ChargeParties>;
export async function authenticate(
  req: ApiRequest,
  agentMessage: AuthRefusal,
  withUser: boolean,
): Promise<{ agent: Agent; userId?: string; userKeyHash?: string; grant?: GrantKeyTerms }> {
  const agentKey = req.headers['x-agent-key'];
  if (!keySent(agentKey)) throw refuse(MISSING_KEY_HEADER.agentKey);
  if (!looksLikeKey(agentKey, AGENT_KEY_PREFIX)) throw refuse(agentMessage);
  const userKey = req.headers['x-user-key'];
  const userKeyOk = looksLikeKey(userKey, USER_KEY_PREFIX);
  const grantKeyOk = !userKeyOk && looksLikeKey(userKey, GRANT_KEY_PREFIX);

  const { agents, users, grants } = caches();
  const agentHash = hashKey(agentKey);
  const userHash = withUser && userKeyOk ? hashKey(userKey) : undefined;
  const grantHash = withUser && grantKeyOk ? hashKey(userKey) : undefined;
  let cachedAgent = agents.get(agentHash);
  let cachedUser = userHash ? users.get(userHash) : undefined;
  let cachedGrant = grantHash ? grants.get(grantHash) : undefined;

  const needAgent = !cachedAgent;
  const needUser = userHash !== undefined && !cachedUser;
  const needGrant = grantHash !== undefined && !cachedGrant;
  if (needAgent || needUser || needGrant) {
    const found = await lookupCredentials({
      ...(needAgent ? { agentKeyHash: agentHash } : {}),
      ...(needUser ? { userKeyHash: userHash } : {}),
      ...(needGrant ? { grantKeyHash: grantHash } : {}),
    });
    if (needGrant && grantHash) {
      cachedGrant = { grant: found.grant ?? null };
      grants.set(grantHash, cachedGrant, cachedGrant.grant ? undefined : NEGATIVE_TTL_MS);
    }
    if (needAgent) {
      cachedAgent = { agent: found.agent ?? null };
      const ttl = cachedAgent.agent ? DISABLED_TTL_MS : NEGATIVE_TTL_MS;
      agents.set(agentHash, cachedAgent, cachedAgent.agent?.enabled ? undefined : ttl);
    }
    if (needUser && userHash) {
      cachedUser = { userId: found.userId ?? null };
      users.set(userHash, cachedUser, cachedUser.userId ? undefined : NEGATIVE_TTL_MS);
    }
  }
  const agent = cachedAgent?.agent;
  if (!agent?.enabled) throw refuse(agentMessage);
  if (!withUser) return { agent };
  // After the agent: a bad agent key is reported first, whatever the user key header holds.
  if (!keySent(userKey)) throw refuse(MISSING_KEY_HEADER.userKey);
  if (grantHash) {
    const grant = cachedGrant?.grant;
    if (!grant) throw refuse(AUTH_MESSAGES.user);
    if (grant.agentId !== agent.id) throw refuse(AUTH_MESSAGES.grantForAnotherAgent);
    // Expiry never changes, so the cached terms decide it exactly; the transaction checks it again.
    if (grant.expiresAt !== undefined && grant.expiresAt <= new Date().toISOString()) throw refuse(AUTH_MESSAGES.user);
    return { agent, userId: grant.userId, userKeyHash: grantHash, grant };
  }
  const userId = cachedUser?.userId;
  if (!userId || !userHash) throw refuse(AUTH_MESSAGES.user);
  return { agent, userId, userKeyHash: userHash };
}

/** Methods that change nothing: the only ones the user API lets a cached key answer. */
const READ_METHODS = new Set(['GET', 'HEAD']);

/**
 * Resolves the x-user-key of the user API (401 `invalid user key`). Returns the user and the key's
 * hash (a rotation needs it). A read (GET) is answered from the cache like agent keys, so a key
 * rotated in another container still reads for up to AUTH_CACHE_TTL_MS. Every other method moves
 * money or changes settings (approve, decline, release, limits, top-ups, grants, webhooks,
 * rotation), and most of their writes are not conditioned on the key: those read the key item
 * again, strongly consistent, so a rotated key is refused at once wherever it is cached (one read
 * per such request; the charge routes are conditioned on the key instead and keep their cache).
 */
export async function authenticateUser(req: ApiRequest): Promise<{ userId: string; userKeyHash: string }> {
  const userKey = req.headers['x-user-key'];
  if (!keySent(userKey)) throw refuse(MISSING_KEY_HEADER.userKey);
  if (!looksLikeKey(userKey, USER_KEY_PREFIX)) throw refuse(AUTH_MESSAGES.user);
  const { users } = caches();
  const userKeyHash = hashKey(userKey);
  let cached = READ_METHODS.has(req.method.toUpperCase()) ? users.get(userKeyHash) : undefined;
  if (!cached) {
    const found = await lookupCredentials({ userKeyHash });
    cached = { userId: found.userId ?? null };
    users.set(userKeyHash, cached, cached.userId ? undefined : NEGATIVE_TTL_MS);
  }
  if (!cached.userId) throw refuse(AUTH_MESSAGES.user);
  return { userId: cached.userId, userKeyHash };
}

/**
 * Recognises the operator (401 `invalid admin key` otherwise). Under ADMIN_AUTH `key`: x-admin-key
 * against the configured admin key, in constant time (none sent: `missing x-admin-key header`). Under `iam`: API Gateway's IAM authorization
 * of the route (SigV4 and execute-api:Invoke, checked before the function ran) is the credential,
 * and x-admin-key is ignored, so a leaked static key opens nothing. A request without that verdict
 * never passes API Gateway on an IAM route; refusing it here too keeps a route deployed without the
 * authorizer closed rather than open.
 */
export async function authenticateAdmin(req: ApiRequest): Promise<void> {
  if (config().ADMIN_AUTH === 'iam') {
    if (!req.iamCaller) throw refuse(AUTH_MESSAGES.admin);
    return;
  }
  const given = req.headers['x-admin-key'];
  if (!keySent(given)) throw refuse(MISSING_KEY_HEADER.adminKey);
  if (!secretsEqual(given, await adminKey())) throw refuse(AUTH_MESSAGES.admin);
}

/**
 * Whether x-admin-key may stand in for a route's own credential (get-charge): only under
 * ADMIN_AUTH `key`. Under `iam` the operator reads any charge through the IAM-authorized
 * `GET /api/v1/admin/charges/{id}` instead, and no public route accepts a static admin key.
 */
export function adminKeyAccepted(): boolean {
  return config().ADMIN_AUTH === 'key';
}
