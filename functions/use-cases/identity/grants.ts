/**
 * The payer's grants (DESIGN §16, docs/grants.md): created, listed, read and revoked with the
 * account key. A grant key is shown once, in the create answer; only its hash is stored. Returns
 * domain values; the API and MCP adapters render them (contracts/grants.ts).
 */
import type { StoredReply } from '../../contracts/api';
import { decodeCursor, encodeCursor, isCount, pageLimit } from '../../contracts/cursor';
import { grantView, type ListGrantsQuery, renderIssuedGrant } from '../../contracts/grants';
import type { Agent } from '../../core/agents';
import { UserKeyRevokedError } from '../../core/errors';
import { newEventId, type OutboxEvent, type Owner } from '../../core/events';
import { type Grant, type GrantStatus, type GrantTerms, newGrant } from '../../core/grants';
import { isId, newGrantId } from '../../core/ids';
import { GRANT_KEY_PREFIX, generateKey, hashKey } from '../../core/keys';
import { refuse } from '../../messages/refusal';
import { answerSeal } from '../../store/answer-seal';
import { getAgentById } from '../../store/identity/agent.repository';
import {
  type ConditionedItem,
  createGrant,
  GrantLimitError,
  getGrant,
  listGrants,
  reclaimExpiredGrants,
  revokeGrant,
} from '../../store/identity/grant.repository';
import { type NamedItem, type OldItem, PRECEDENCE } from '../../store/transact';
import { AUTH_MESSAGES, forgetUserKey } from '../auth';
import { creation } from '../idempotency';
import { closePayerTabs } from '../tabs/close';

/** A new grant and its key, shown this once. */
export interface IssuedGrant {
  grant: Grant;
  key: string;
}

/** A grant made by POST /api/v1/users/me/grants: with the time it was made at (its answer shows the grant as of then). */
export type CreatedGrant = IssuedGrant & { now: Date };

export function grantEvent(type: 'grant.created' | 'grant.revoked' | 'grant.approved', owner: Owner, grant: Grant, now: Date): OutboxEvent {
  // No event carries a key: the data is the Grant as the API shows it.
  return { id: newEventId(now), type, createdAt: now.toISOString(), owner, data: grantView(grant, now) };
}

/** The payer, and the account key a request of theirs was authenticated with (by its hash). */
export interface AccountKey {
  userId: string;
  accountKeyHash: string;
}

/**
 * Issues a grant of `terms` from the payer to the agent `agentId`: 400 `agentId: agent not found`
 * for an unknown agent; 409 `grant limit reached: …` at MAX_ACTIVE_GRANTS active grants (after
 * expired ones stop counting); 401 `invalid user key` once the account key it was asked with has
 * been rotated away (whatever an auth cache says: the create is conditioned on it). `approved`:
 * issued on the consent page (the agent is told `grant.approved` too, and `also` joins the
 * transaction).
 */
export async function issueGrant(
  payer: AccountKey,
  agentId: string,
  terms: GrantTerms,
  opts: { approved?: boolean; also?: readonly ConditionedItem[]; id?: string; key?: string; now?: Date; agent?: Agent } = {},
): Promise<IssuedGrant> {
  const { userId, accountKeyHash } = payer;
  const agent = opts.agent ?? (await getAgentById(agentId));
  if (!agent) throw refuse('grantAgentNotFound');
  const now = opts.now ?? new Date();
  const key = opts.key ?? generateKey(GRANT_KEY_PREFIX);
  const grant = newGrant({ id: opts.id ?? newGrantId(), userId, agentId, agentName: agent.name }, terms, now);
  const events = [
    grantEvent('grant.created', { kind: 'user', id: userId }, grant, now),
    ...(opts.approved ? [grantEvent('grant.approved', { kind: 'agent', id: agentId }, grant, now)] : []),
  ];
  const write = async () => {
    try {
      await createGrant(grant, hashKey(key), { accountKeyHash, events, now, ...(opts.also ? { also: opts.also } : {}) });
    } catch (error) {
      if (!(error instanceof UserKeyRevokedError)) throw error;
      forgetUserKey(accountKeyHash);
      throw refuse(AUTH_MESSAGES.user);
    }
  };
  try {
    await write();
  } catch (error) {
    // At the limit: grants that expired meanwhile stop counting, then one more try. The try happens
    // even when this request reclaimed nothing itself: a racing create may have reclaimed the places
    // (two expired grants, two racing creates, one reclaiming both: both must get a place).
    if (!(error instanceof GrantLimitError)) throw error;
    await reclaimExpiredGrants(userId, now);
    await write();
  }
  return { grant, key };
}

/**
 * POST /api/v1/users/me/grants: `issueGrant`, answered 201 with the Grant and its key
 * (contracts/grants.ts `renderIssuedGrant`). With an
 * Idempotency-Key (optional) a lost answer can be asked for again: the record (scope
 * `<userId>#grants`, so another payer's key never finds it) joins the grant's own transaction and
 * keeps the answer sealed for the replay window; the same key with other terms → 422. A key rotated
 * away is refused before a replay (its grants were revoked with it).
 */
export function createGrantForPayer(
  payer: AccountKey,
  body: GrantTerms & { agentId: string },
  idempotencyKey: string | undefined,
): Promise<CreatedGrant | StoredReply> {
  const { agentId, ...terms } = body;
  return creation<CreatedGrant>(
    {
      scope: `${payer.userId}#grants`,
      key: idempotencyKey,
      request: {
        agentId,
        currency: terms.currency,
        limits: JSON.stringify(terms.limits ?? {}),
        approvalAbove: terms.approvalAbove ?? '',
        ttlSeconds: terms.ttlSeconds ?? '',
        description: terms.description ?? '',
        // Only when given: a request without a scope keeps the fingerprint it always had.
        ...(terms.scope !== undefined ? { scope: JSON.stringify(terms.scope) } : {}),
      },
      seal: answerSeal,
      render: renderIssuedGrant,
    },
    async ({ now, record }) => {
      const id = newGrantId();
      const key = generateKey(GRANT_KEY_PREFIX);
      // The record needs the grant as it will be made: made here, issued with the same id, key and time.
      const agent = await getAgentById(agentId);
      if (!agent) throw refuse('grantAgentNotFound');
      const grant = newGrant({ id, userId: payer.userId, agentId, agentName: agent.name }, terms, now);
      const item = record({ grant, key, now });
      const also = item ? [{ item: item.item, refusal: (old?: OldItem) => refusalOf(item, old), precedence: PRECEDENCE.replay }] : [];
      const issued = await issueGrant(payer, agentId, terms, { id, key, now, agent, also });
      return { ...issued, now };
    },
  );
}

/** The error a named item's failed condition means, as a ConditionedItem states it. */
function refusalOf(item: NamedItem, old: OldItem | undefined): Error {
  const meaning = item.onConditionFailed(old);
  if (meaning instanceof Error) return meaning;
  throw new Error('an idempotency record whose condition means no error');
}

const grantNotFound = () => refuse('grantNotFound');

/** One of the payer's grants: 404 `grant not found` for an unknown id or another payer's. */
export async function readGrant(userId: string, grantId: string | undefined): Promise<Grant> {
  if (!isId('grant', grantId)) throw grantNotFound();
  const grant = await getGrant(userId, grantId);
  if (!grant) throw grantNotFound();
  return grant;
}

/**
 * DELETE /api/v1/users/me/grants/{id}: revokes one of the payer's grants (`revokeGrantItem`) and
 * closes the tabs opened under it at what they used, the rest of their holds back to the payer
 * (docs/tabs.md "Rotation and revocation": a use reads nothing, so its tab must close). Once before
 * the revocation, so a close that fails leaves the grant active and the payer told (503: retry);
 * once after, for a tab opened in between (none opens under a revoked grant: the opening is
 * conditioned on the grant item). Revoking a revoked grant closes what is still open of it, so a
 * retry finishes what a failure left.
 */
export async function revokeMyGrant(userId: string, grantId: string | undefined): Promise<Grant> {
  if (!isId('grant', grantId)) throw grantNotFound();
  // Another payer's grant id finds nothing here: the list is this payer's.
  await closePayerTabs(userId, { grantId });
  const grant = await revokeGrantItem(userId, grantId);
  await closePayerTabs(userId, { grantId });
  return grant;
}

/**
 * Revokes one of the payer's grants: from now on every charge with its key is refused (the
 * charge's transaction is conditioned on the grant item). Revoking it again answers the same.
 * The payer and the agent are told `grant.revoked` once. Its tabs are the caller's to close
 * (`revokeMyGrant`, or a rotation, which closes every tab of the payer at once).
 */
export async function revokeGrantItem(userId: string, grantId: string | undefined): Promise<Grant> {
  if (!isId('grant', grantId)) throw grantNotFound();
  const now = new Date();
  const grant = await revokeGrant(userId, grantId, now, (revoked) => [
    grantEvent('grant.revoked', { kind: 'user', id: userId }, revoked, now),
    grantEvent('grant.revoked', { kind: 'agent', id: revoked.agentId }, revoked, now),
  ]);
  if (!grant) throw grantNotFound();
  return grant;
}

/** A page of the payer's grants, newest first; `lastId` is where the next page starts. */
export function listMyGrants(
  userId: string,
  page: { limit: number; after?: string; status?: GrantStatus },
): Promise<{ grants: Grant[]; lastId?: string }> {
  if (page.after !== undefined && !isId('grant', page.after)) throw refuse('cursorInvalid');
  return listGrants(userId, { ...page, now: new Date() });
}

/** A grants cursor: the last grant id returned and the page size. */
const readGrantsCursor = (text: string) =>
  decodeCursor(text, ([after, limit, ...rest]) =>
    rest.length === 0 && typeof after === 'string' && isCount(limit) ? { after, limit } : undefined,
  );

/** GET /api/v1/users/me/grants: a page of the payer's grants, newest first, and the cursor of the next. */
export async function listGrantsPage(userId: string, query: ListGrantsQuery): Promise<{ grants: Grant[]; nextCursor: string | null }> {
  const cursor = query.cursor ? readGrantsCursor(query.cursor) : undefined;
  const limit = pageLimit(query.limit, cursor?.limit);
  const page = await listMyGrants(userId, {
    limit,
    ...(cursor ? { after: cursor.after } : {}),
    ...(query.status ? { status: query.status } : {}),
  });
  return { grants: page.grants, nextCursor: page.lastId ? encodeCursor([page.lastId, limit]) : null };
}
