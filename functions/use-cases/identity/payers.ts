/**
 * The payer's side (docs/design.md §11): a user sees their balances and held money, the history of
 * every charge against them (refusals included: the authorization log), sets a spending policy,
 * approves or declines PENDING charges (rotating their key: account-key.ts).
 */

import { decodeCursor, encodeCursor, isCount, pageLimit } from '../../contracts/cursor';
import { jsonAmount } from '../../contracts/json';
import type { ListUserChargesQuery, PolicyRequest } from '../../contracts/request.schemas';
import { balancesView, userChargeView } from '../../contracts/views';
import type { Charge } from '../../core/charges';
import {
  AgentDisabledError,
  ChargeNotPendingError,
  GrantExpiredError,
  GrantRevokedError,
  ServiceBusyError,
  StaleReadError,
} from '../../core/errors';
import { isId } from '../../core/ids';
import { decideSettlement } from '../../core/lifecycle';
import { CURRENCIES, type Currency } from '../../core/money';
import type { Limits, PolicyRules, SpendingPolicy } from '../../core/policy';
import { chargeIdOfPurchase } from '../../core/purchases';
import type { User } from '../../core/users';
import type { RefusalCode } from '../../messages/catalogue';
import { isRefusal, type Refusal, refuse } from '../../messages/refusal';
import { chargeBeforeSettling, getPendingCharge } from '../../store/charges/charge-pending.repository';
import { getChargeById, listUserCharges, userChargePosition } from '../../store/charges/charge-read.repository';
import { type Settlement, settledCharge, settlePending } from '../../store/charges/charge-settlement.repository';
import { getAgentById } from '../../store/identity/agent.repository';
import { getUser, replacePolicy } from '../../store/identity/user.repository';
import { approvalToken } from '../charges/approval-token';
import { knownPayerState, rememberPayer } from '../charges/payer-cache';
import { settlementEvents } from '../events/events';
import { closeTabsOf } from '../tabs/close';

/**
 * GET /api/v1/users/me: balances, money held in PENDING charges, money owed after a reversed
 * top-up (docs/topups.md: no charge in a currency owed until a top-up pays it), and the policy.
 */
export async function readMe(userId: string): Promise<User> {
  const user = await getUser(userId);
  if (!user) throw refuse('userNotFound');
  return user;
}

/** The payer as GET /api/v1/users/me shows them. */
export const meView = (user: User) => ({
  id: user.id,
  balances: balancesView(user.balances),
  held: balancesView(user.held),
  owed: balancesView(user.owed),
  policy: policyView(user.policy),
});

/** GET /api/v1/users/me/policy: the policy (`{}` until one is set). */
export async function readPolicy(userId: string): Promise<SpendingPolicy> {
  const user = await getUser(userId);
  if (!user) throw refuse('userNotFound');
  return user.policy;
}

/**
 * PUT /api/v1/users/me/policy: replaces the whole policy. Every agent it names must exist (400
 * naming it otherwise); the stored policy is unchanged by any refusal. The version bump makes
 * every container re-judge charges under the new policy on their next attempt.
 */
export async function setPolicy(userId: string, request: PolicyRequest): Promise<SpendingPolicy> {
  for (const agentId of Object.keys(request.agents ?? {})) {
    if (!(await getAgentById(agentId))) throw refuse('policyAgentUnknown', agentId);
  }
  const policy = stripUndefined(request) as SpendingPolicy;
  const user = await replacePolicy(userId, policy);
  if (!user) throw refuse('userNotFound');
  const known = knownPayerState(userId);
  if (known) rememberPayer(userId, { ...known, policy: user.policy, policyVersion: user.policyVersion });
  // A blocked agent's tabs close at what they used before the block (docs/tabs.md, DESIGN §29).
  // A tab that could not be closed would keep taking uses under a block the payer was told is in
  // force: the call fails (503) instead, and sending the same policy again closes the rest.
  let failed = 0;
  for (const [agentId, rules] of Object.entries(user.policy.agents ?? {})) {
    if (rules.blocked === true) failed += (await closeTabsOf({ agentId, userId }, 'agent blocked')).failed;
  }
  if (failed > 0) throw new ServiceBusyError(new Error(`${failed} tab(s) of a blocked agent could not be closed`));
  return user.policy;
}

/** A user-history cursor: the last charge id returned and the page size. */
function readUserChargeCursor(text: string): { after: string; limit: number } {
  return decodeCursor(text, ([after, limit, ...rest]) =>
    rest.length === 0 && isId('charge', typeof after === 'string' ? after : undefined) && isCount(limit)
      ? { after: after as string, limit }
      : undefined,
  );
}

/**
 * GET /api/v1/users/me/charges: every charge against this user, newest first, with the agent's
 * name. A cursor that names none of this user's charges (another payer's, or nothing) is 400
 * `cursor is invalid`. With `status`, a page may hold fewer than `limit` charges (even none) and
 * still a `nextCursor`: each request reads a bounded part of the history (MAX_FILTERED_QUERIES).
 * Each PENDING charge that waits for the payer carries its `approvalUrl` (DESIGN §16: a grant
 * key's charge gives the agent none, so the payer finds the link here and in their webhook).
 */
export async function listMyCharges(
  userId: string,
  query: ListUserChargesQuery,
  baseUrl: string,
  filters: { agentId?: string; currency?: Currency } = {},
): Promise<UserChargePage> {
  const cursor = query.cursor ? readUserChargeCursor(query.cursor) : undefined;
  const limit = pageLimit(query.limit, cursor?.limit);
  const after = cursor ? await userChargePosition(userId, cursor.after) : undefined;
  if (cursor && !after) throw refuse('cursorInvalid');
  const page = await listUserCharges(userId, {
    limit,
    ...(after ? { after } : {}),
    ...(query.status ? { status: query.status } : {}),
    ...(filters.agentId ? { agentId: filters.agentId } : {}),
    ...(filters.currency ? { currency: filters.currency } : {}),
  });
  return {
    data: await Promise.all(page.charges.map((c) => historyView(c, baseUrl))),
    nextCursor: page.lastId ? encodeCursor([page.lastId, limit]) : null,
  };
}

/** A page of the payer's history as the API lists it: each charge's view (its approval link when it waits for them) and where the next page starts. */
export interface UserChargePage {
  data: (ReturnType<typeof userChargeView> & { approvalUrl?: string })[];
  nextCursor: string | null;
}

/** A charge in the payer's history; one waiting for the payer's approval with its link (a token derived, never stored). */
async function historyView(charge: Charge, baseUrl: string) {
  const view = userChargeView(charge, baseUrl);
  if (charge.status !== 'PENDING' || charge.pendingReason !== 'user_approval') return view;
  return { ...view, approvalUrl: `${baseUrl}/approve/${await approvalToken(charge.id)}` };
}

/** The payer's approval: PENDING → SUCCESS, the held amount to the agent. */
export const APPROVED: Settlement = { kind: 'approve' };
/** The payer's refusal: PENDING → FAILED `declined by user`, the hold back to the user. */
export const DECLINED = {
  kind: 'return',
  status: 'FAILED',
  failureReason: 'declined by user',
  awaiting: 'user_approval',
} as const satisfies Settlement;

/**
 * POST /api/v1/users/me/charges/{id}/approve: PENDING → SUCCESS, the held amount to the agent; a
 * hold (`capture: false`) stays PENDING with `pendingReason: "capture"` for its `holdSeconds`.
 */
export function approveCharge(userId: string, chargeId: string | undefined): Promise<Charge> {
  return settleMine(userId, chargeId, APPROVED);
}

/** POST /api/v1/users/me/charges/{id}/decline: PENDING → FAILED, the hold back to the user. */
export function declineCharge(userId: string, chargeId: string | undefined): Promise<Charge> {
  return settleMine(userId, chargeId, DECLINED);
}

function settleMine(userId: string, chargeId: string | undefined, settlement: Settlement): Promise<Charge> {
  return settle(chargeId, settlement, (c) => c.userId === userId);
}

/** The payer ends an open hold (DESIGN §16): FAILED `released by user`, whatever it waits for. */
export const RELEASED_BY_USER = {
  kind: 'return',
  status: 'FAILED',
  failureReason: 'released by user',
} as const satisfies Settlement;

/**
 * POST /api/v1/users/me/charges/{id}/release: the payer ends any open hold of theirs (one waiting
 * for their approval or for the agent's capture): FAILED `released by user`, the hold back to the
 * balance and to the grant's counters. 409 `charge is not pending` otherwise (expired included).
 */
export async function releaseMyCharge(userId: string, chargeId: string | undefined): Promise<Charge> {
  try {
    return await settle(chargeId, RELEASED_BY_USER, (c) => c.userId === userId, { anyReason: true });
  } catch (error) {
    if (isRefusal(error, 'chargeExpired')) throw refuse('chargeNotPending');
    throw error;
  }
}

/**
 * Ends a PENDING charge the caller may act on (`mine`): exactly one of approve, decline and the
 * sweeper wins, and money moves once (store `settlePending`). Returns the charge as this very
 * decision left it (an approved hold: PENDING, awaiting the capture), even if the agent has
 * released or captured it since. 404 `charge not found` for an unknown charge or someone else's;
 * 409 `charge expired` past `expiresAt` (even before the sweeper has run); 409 `charge is not
 * pending` once it has moved on, or when another settlement won the race.
 */
export async function settle(
  chargeId: string | undefined,
  settlement: Settlement,
  mine: (c: { userId: string }) => boolean,
  opts: { anyReason?: boolean } = {},
): Promise<Charge> {
  // A purchase in the payer's history shows its own id (`xp…`): the payer approves it by that id too.
  chargeId = chargeIdOfPurchase(chargeId) ?? chargeId;
  if (!isId('charge', chargeId)) throw refuse('chargeNotFound');
  const pending = await getPendingCharge(chargeId);
  if (!pending) {
    const charge = await getChargeById(chargeId);
    if (!charge || !mine(charge)) throw refuse('chargeNotFound');
    throw notPending(charge.status);
  }
  if (!mine(pending)) throw refuse('chargeNotFound');
  const now = new Date();
  const expiry = settlement.kind === 'return' && settlement.status === 'EXPIRED';
  const decision = decideSettlement(pending, { expiry, anyReason: opts.anyReason === true }, now);
  if (decision.kind === 'refused') throw decision.reason === 'expired' ? refuse('chargeExpired') : notPending('PENDING');
  // The charge as it is now, from the marker (it carries the whole charge): no extra read.
  const before = await chargeBeforeSettling(pending);
  if (!before) throw refuse('chargeNotFound');
  try {
    await settlePending(pending, settlement, now, { events: settlementEvents(before, settlement, now) });
    // The transaction committed only from `before`'s state: this is what it left, whatever came after.
    return settledCharge(before, settlement, now);
  } catch (error) {
    if (error instanceof ChargeNotPendingError) throw notPending(error.status);
    if (error instanceof StaleReadError) throw refuse('chargeChanging');
    throw refusedApproval(error) ?? error;
  }
}

/**
 * Why the settlement's own transaction refused to pay the agent, as the API says it (the page
 * says it in words: pages/approval-page.view.ts): the agent disabled (its kill switch, as its own
 * capture meets it), or the grant the charge was made under revoked or ended. Nobody approves
 * such a charge, the payer included; declining and releasing it still give the hold back.
 */
export function refusedApproval(error: unknown): Refusal<ApprovalRefusal> | undefined {
  if (error instanceof AgentDisabledError) return refuse(APPROVAL_REFUSALS.agentDisabled);
  if (error instanceof GrantRevokedError) return refuse(APPROVAL_REFUSALS.grantRevoked);
  if (error instanceof GrantExpiredError) return refuse(APPROVAL_REFUSALS.grantExpired);
  return undefined;
}

/** The 403 errors of an approval the money's own conditions refused. */
export const APPROVAL_REFUSALS = {
  agentDisabled: 'agentDisabled',
  grantRevoked: 'grantRevoked',
  grantExpired: 'grantExpired',
} as const satisfies Record<string, RefusalCode>;
export type ApprovalRefusal = (typeof APPROVAL_REFUSALS)[keyof typeof APPROVAL_REFUSALS];

const notPending = (status: string) => (status === 'EXPIRED' ? refuse('chargeExpired') : refuse('chargeNotPending'));

/** The policy as JSON: amounts as exact decimal numbers, absent parts left out. */
export function policyView(policy: SpendingPolicy) {
  const limits = (l: Limits | undefined) => {
    if (!l) return undefined;
    const out: Partial<Record<Currency, ReturnType<typeof jsonAmount>>> = {};
    for (const c of CURRENCIES) if (l[c] !== undefined) out[c] = jsonAmount(l[c] as number, c);
    return out;
  };
  const rules = (r: PolicyRules) =>
    stripUndefined({
      perCharge: limits(r.perCharge),
      daily: limits(r.daily),
      monthly: limits(r.monthly),
      approvalAbove: limits(r.approvalAbove),
    });
  return stripUndefined({
    ...rules(policy),
    approvalWindowSeconds: policy.approvalWindowSeconds,
    agents: policy.agents
      ? Object.fromEntries(Object.entries(policy.agents).map(([id, a]) => [id, stripUndefined({ ...rules(a), blocked: a.blocked })]))
      : undefined,
  });
}

/** The object without its undefined fields (DynamoDB and JSON answers keep only what was given). */
function stripUndefined<T extends Record<string, unknown>>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    // Only plain objects: an exact amount (LosslessNumber) is a value, not a map.
    out[k] =
      v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype
        ? stripUndefined(v as Record<string, unknown>)
        : v;
  }
  return out as T;
}
