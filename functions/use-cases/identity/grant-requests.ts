/**
 * Agents ask, payers consent (DESIGN §16, like OAuth's device flow; docs/grants.md). The agent
 * asks for terms (`requestGrant`) and gets a consent link for its payer; on the consent page the
 * payer enters the account key and allows (the grant is created for that payer) or denies; the
 * agent polls (`readGrantRequest`) and its first read after the approval takes the grant key,
 * exactly once. The agent never sees the account key.
 *
 * Nothing secret is stored: the consent token and the grant key are derived from the approval
 * secret (`derivedSecret`); the table keeps the token's hash (the link's lookup) and, between the
 * approval and the claim only, the random nonce the key is derived from, removed by the claim.
 */
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import type { StoredReply } from '../../contracts/api';
import { type GrantRequestCreated, renderGrantRequestCreated } from '../../contracts/grant-request-outcome';
import { grantRequestView } from '../../contracts/grants';
import type { Agent } from '../../core/agents';
import { AgentDisabledError } from '../../core/errors';
import { GRANT_REQUEST_TTL_SECONDS, type Grant, type GrantRequest, type GrantTerms, grantRequestStatus } from '../../core/grants';
import { isId, newGrantId, newGrantRequestId } from '../../core/ids';
import { GRANT_KEY_PREFIX, hashKey, looksLikeKey, USER_KEY_PREFIX } from '../../core/keys';
import { isRefusal, type Refusal, refuse } from '../../messages/refusal';
import { getAgentById } from '../../store/identity/agent.repository';
import { lookupCredentials } from '../../store/identity/credentials.repository';
import { getGrant } from '../../store/identity/grant.repository';
import {
  approveItem,
  claimGrantRequest,
  createGrantRequest,
  denyGrantRequest,
  findConsent,
  GrantRequestDecidedError,
  getGrantRequest,
} from '../../store/identity/grant-request.repository';
import { getUserKeyHash } from '../../store/identity/user.repository';
import { AUTH_MESSAGES, forgetAgent } from '../auth';
import { derivedSecret } from '../charges/approval-token';
import { idempotent } from '../idempotency';
import { type AccountKey, issueGrant } from './grants';

/** Stands for the consent token in a stored answer; a replay derives it again (it is never stored). */
const TOKEN_PLACEHOLDER = '{consentToken}';

const consentToken = async (requestId: string) => (await derivedSecret(`consent:${requestId}`)).toString('base64url');
const grantKeyOf = async (requestId: string, nonce: string) =>
  GRANT_KEY_PREFIX + bs58.encode(await derivedSecret(`grant-key:${requestId}:${nonce}`));
const consentUrl = (baseUrl: string, token: string) => `${baseUrl}/consent/${token}`;

/**
 * POST /api/v1/agents/grant-requests: a pending request for `terms`, living 15 minutes, and its
 * consent link. Idempotent by the Idempotency-Key (scoped to the agent): a replay answers the same
 * request and link.
 */
export function requestGrant(input: {
  agent: Agent;
  idempotencyKey: string;
  baseUrl: string;
  terms: GrantTerms;
}): Promise<GrantRequestCreated | StoredReply> {
  const { agent, terms } = input;
  return idempotent(
    {
      scope: `${agent.id}#grant-requests`,
      key: input.idempotencyKey,
      request: {
        currency: terms.currency,
        limits: JSON.stringify(terms.limits ?? {}),
        approvalAbove: terms.approvalAbove ?? '',
        ttlSeconds: terms.ttlSeconds ?? '',
        description: terms.description ?? '',
        // Only when given: a request without a scope keeps the fingerprint it always had.
        ...(terms.scope !== undefined ? { scope: JSON.stringify(terms.scope) } : {}),
      },
      rounds: 3,
      // The record keeps the consent link without its token (restored on replay).
      render: renderGrantRequestCreated,
      restore: async (stored) => {
        const { id } = JSON.parse(stored) as { id: string };
        return stored.replace(TOKEN_PLACEHOLDER, await consentToken(id));
      },
    },
    async ({ now, record }) => {
      const request: GrantRequest = {
        id: newGrantRequestId(),
        agentId: agent.id,
        terms,
        createdAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + GRANT_REQUEST_TTL_SECONDS * 1000).toISOString(),
        state: 'pending',
      };
      const token = await consentToken(request.id);
      const created: GrantRequestCreated = {
        request,
        consentUrl: consentUrl(input.baseUrl, token),
        storedConsentUrl: consentUrl(input.baseUrl, TOKEN_PLACEHOLDER),
        now,
      };
      await createGrantRequest(request, hashKey(token), record(created), now);
      return created;
    },
  );
}

/**
 * GET /api/v1/agents/grant-requests/{id}: the request as it is now. Once approved, the first read
 * moves it to `claimed` and is the only answer ever to carry the grant's key; later reads show the
 * grant without it. 404 `grant request not found` for an unknown id or another agent's.
 */
export async function readGrantRequest(agent: Agent, requestId: string | undefined, baseUrl: string) {
  if (!isId('grantRequest', requestId)) throw refuse('grantRequestNotFound');
  const request = await getGrantRequest(agent.id, requestId);
  if (!request) throw refuse('grantRequestNotFound');
  const now = new Date();
  const link = consentUrl(baseUrl, await consentToken(request.id));
  let key: string | undefined;
  let current: GrantRequest = request;
  if (request.state === 'approved') {
    const { nonce } = request;
    if (nonce !== undefined && (await claimed(agent, { requestId: request.id, nonce }, now))) {
      key = await grantKeyOf(request.id, nonce);
      current = { ...request, state: 'claimed' };
    } else {
      // Another read claimed it first: show what that left.
      current = (await getGrantRequest(agent.id, request.id)) ?? request;
    }
  }
  const grant = await grantOf(current);
  return grantRequestView(current, { consentUrl: link, ...(grant ? { grant } : {}), ...(key ? { key } : {}), now });
}

/**
 * Claims the approved request for this agent's key: false when another read claimed it first. The
 * agent came from the auth cache, which may be up to 30 s behind the operator's switch or a key
 * rotation; the claim's own transaction checks the agent item, so a key the cache still lets in is
 * refused here as it will be everywhere once the cache runs out (and forgotten in this container).
 */
async function claimed(agent: Agent, claim: { requestId: string; nonce: string }, now: Date): Promise<boolean> {
  try {
    return await claimGrantRequest({ ...claim, agentId: agent.id, agentKeyHash: agent.keyHash }, now);
  } catch (error) {
    if (!(error instanceof AgentDisabledError)) throw error;
    forgetAgent(agent.keyHash);
    throw refuse(AUTH_MESSAGES.grantRequests);
  }
}

const grantOf = async (request: GrantRequest): Promise<Grant | undefined> =>
  request.grantId && request.userId ? getGrant(request.userId, request.grantId) : undefined;

/** What the consent page shows: the request and its agent, and whether the page asked again after a wrong key. */
export type ConsentPage =
  | { kind: 'invalid' }
  | {
      kind: 'request';
      request: GrantRequest;
      status: ReturnType<typeof grantRequestStatus>;
      agent: Pick<Agent, 'name' | 'website'> | undefined;
      /** Re-rendered after a refusal: 400 `invalid account key`, or 409 at the payer's grant limit. */
      refused?: { statusCode: number; message: string };
    }
  | { kind: 'decided' };

async function requestOfToken(token: string | undefined): Promise<GrantRequest | undefined> {
  if (token === undefined || token.length > 128) return undefined;
  const found = await findConsent(hashKey(token));
  return found ? getGrantRequest(found.agentId, found.requestId) : undefined;
}

async function page(request: GrantRequest, refusal?: Refusal): Promise<ConsentPage> {
  const refused = refusal && { statusCode: refusal.statusCode, message: refusal.message };
  const agent = await getAgentById(request.agentId);
  return {
    kind: 'request',
    request,
    status: grantRequestStatus(request, new Date()),
    agent,
    ...(refused ? { refused } : {}),
  };
}

/** GET /consent/{token}: the request awaiting a decision, or the state it ended in; `invalid` for a bad link. */
export async function showConsentPage(token: string | undefined): Promise<ConsentPage> {
  const request = await requestOfToken(token);
  return request ? page(request) : { kind: 'invalid' };
}

/**
 * POST /consent/{token}: Allow (with the payer's account key: the grant is created for that payer,
 * the request `approved`, in one transaction) or Deny. A wrong key re-renders the page (400
 * `invalid account key`) and changes nothing; a link already used or expired answers `decided`,
 * and the page it redirects to shows its final state.
 */
export async function decideOnConsentPage(
  token: string | undefined,
  form: { action: 'allow' | 'deny'; accountKey?: string | undefined },
  /**
   * A payer signed in to the console (DESIGN §21): allows as them, with no key pasted — with the key
   * that opened a key-opened session (`accountKeyHash`, DESIGN §24), else their current one.
   */
  signedIn?: { userId: string; accountKeyHash?: string },
): Promise<ConsentPage> {
  const request = await requestOfToken(token);
  if (!request) return { kind: 'invalid' };
  const now = new Date();
  if (grantRequestStatus(request, now) !== 'pending') return { kind: 'decided' };
  try {
    if (form.action === 'deny') {
      await denyGrantRequest(request, now);
      return { kind: 'decided' };
    }
    const account = signedIn
      ? signedIn.accountKeyHash
        ? { userId: signedIn.userId, accountKeyHash: signedIn.accountKeyHash }
        : await accountOfUser(signedIn.userId)
      : await accountOf(form.accountKey);
    if (!account) return page(request, refuse('invalidAccountKey'));
    const grantId = newGrantId();
    const nonce = bs58.encode(randomBytes(16));
    const { userId } = account;
    try {
      await issueGrant(account, request.agentId, request.terms, {
        approved: true,
        id: grantId,
        key: await grantKeyOf(request.id, nonce),
        also: [approveItem(request, { grantId, userId, nonce }, now)],
        now,
      });
    } catch (error) {
      // Rotated away between the lookup and the grant's transaction: as a wrong key.
      if (isRefusal(error, 'invalidUserKey')) return page(request, refuse('invalidAccountKey'));
      if (isRefusal(error) && (error.statusCode === 404 || error.statusCode === 409)) return page(request, error);
      throw error;
    }
    return { kind: 'decided' };
  } catch (error) {
    if (error instanceof GrantRequestDecidedError) return { kind: 'decided' };
    throw error;
  }
}

/** A signed-in payer's account, with their current key's hash (the grant's transaction is conditioned on it). */
async function accountOfUser(userId: string): Promise<AccountKey | undefined> {
  const accountKeyHash = await getUserKeyHash(userId);
  return accountKeyHash ? { userId, accountKeyHash } : undefined;
}

/** The payer an account key belongs to, with the key's hash (read, not cached: the page is rare and the key must be current). */
async function accountOf(key: string | undefined): Promise<AccountKey | undefined> {
  if (!looksLikeKey(key, USER_KEY_PREFIX)) return undefined;
  const accountKeyHash = hashKey(key);
  const { userId } = await lookupCredentials({ userKeyHash: accountKeyHash });
  return userId ? { userId, accountKeyHash } : undefined;
}
