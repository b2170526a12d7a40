/**
 * The approval page (docs/design.md §11, docs/approvals.md): `GET /approve/{token}` shows the
 * charge the link was made for; `POST` approves or declines it through the same `settle()` as the
 * user API and the sweeper, so exactly one of them wins and the money moves once. The token is
 * the whole authority (no key, no cookie): whoever holds the link may decide, once. What the
 * reader sees is rendered by the page adapter (functions/pages/approval-page.view.ts).
 */

import type { Agent } from '../../core/agents';
import type { Charge } from '../../core/charges';
import { grantStatus } from '../../core/grants';
import { isRefusal } from '../../messages/refusal';
import { getPendingCharge } from '../../store/charges/charge-pending.repository';
import { getCharge, getChargeById } from '../../store/charges/charge-read.repository';
import { getAgentById } from '../../store/identity/agent.repository';
import { getGrant } from '../../store/identity/grant.repository';
import { APPROVAL_REFUSALS, APPROVED, type ApprovalRefusal, DECLINED, settle } from '../identity/payers';
import { chargeOfToken } from './approval-token';

/**
 * What the page shows: the link's charge as it is now, with its agent, and (while it waits for the
 * payer) why it can no longer be approved, if so; or a link that is not one of ours.
 */
export type ApprovalPage =
  | { kind: 'charge'; charge: Charge; agent: Agent | undefined; now: Date; refusal?: ApprovalRefusal }
  | { kind: 'invalid-link' };

/**
 * After a decision: back to the link's own page (its token); the approval refused by the money's
 * own conditions (the page, saying why, with 403); or a link that is not one of ours.
 */
export type ApprovalOutcome =
  | { kind: 'decided'; token: string }
  | { kind: 'refused'; page: Extract<ApprovalPage, { kind: 'charge' }> }
  | { kind: 'invalid-link' };

const INVALID_LINK = { kind: 'invalid-link' } as const;
const APPROVAL_REFUSAL_LIST: readonly ApprovalRefusal[] = Object.values(APPROVAL_REFUSALS);

/** GET /approve/{token}: the charge awaiting a decision, or the state it ended in; an invalid link for a bad one. */
export async function showApprovalPage(token: string | undefined): Promise<ApprovalPage> {
  const chargeId = token === undefined ? undefined : await chargeOfToken(token);
  const charge = chargeId === undefined ? undefined : await currentCharge(chargeId);
  if (!charge) return INVALID_LINK;
  const agent = await getAgentById(charge.agentId);
  const now = new Date();
  const refusal = await approvalRefusal(charge, agent, now);
  return { kind: 'charge', charge, agent, now, ...(refusal ? { refusal } : {}) };
}

/**
 * Why a charge waiting for its payer can no longer be approved, as far as the page can see before
 * anyone presses Approve (the agent disabled, the grant revoked or ended), so it offers Decline
 * only. Advice for the reader: the approval's own transaction is what refuses (payers.settle).
 */
async function approvalRefusal(charge: Charge, agent: Agent | undefined, now: Date): Promise<ApprovalRefusal | undefined> {
  if (charge.status !== 'PENDING' || charge.pendingReason !== 'user_approval') return undefined;
  if (agent && !agent.enabled) return APPROVAL_REFUSALS.agentDisabled;
  if (charge.grantId === undefined) return undefined;
  const grant = await getGrant(charge.userId, charge.grantId);
  if (!grant) return undefined;
  const status = grantStatus(grant, now);
  return status === 'revoked' ? APPROVAL_REFUSALS.grantRevoked : status === 'expired' ? APPROVAL_REFUSALS.grantExpired : undefined;
}

/**
 * POST /approve/{token}: approve or decline; the page adapter then answers 303 back to the page,
 * which shows the outcome (post/redirect/get: reloading shows the state rather than posting
 * again). Losing a race to the user API or the sweeper, or a link already used or expired, is not
 * an error here: the page it redirects to shows what happened instead.
 */
export async function decideOnApprovalPage(token: string | undefined, action: 'approve' | 'decline'): Promise<ApprovalOutcome> {
  if (token === undefined) return INVALID_LINK;
  const chargeId = await chargeOfToken(token);
  if (chargeId === undefined) return INVALID_LINK;
  try {
    // The token is the authority: it was made for this charge, whoever's it is.
    await settle(chargeId, action === 'approve' ? APPROVED : DECLINED, () => true);
  } catch (error) {
    // Refused by the approval's own conditions: the page says why at once (a redirect could show
    // Approve again, from reads that have not caught up with what refused it).
    if (isRefusal(error, ...APPROVAL_REFUSAL_LIST)) {
      const page = await showApprovalPage(token);
      return page.kind === 'charge' ? { kind: 'refused', page: { ...page, refusal: error.code } } : INVALID_LINK;
    }
    if (!(isRefusal(error) && (error.statusCode === 409 || error.statusCode === 404))) throw error;
  }
  return { kind: 'decided', token };
}

/**
 * The charge as it is now. Its pending marker (read strongly consistent) names the agent while it
 * is PENDING, from the moment the link exists; after that only the id index (eventually
 * consistent) does. Either way the charge itself is then read strongly consistent, so the page
 * right after a decision never shows the state before it.
 */
async function currentCharge(chargeId: string): Promise<Charge | undefined> {
  const agentId = (await getPendingCharge(chargeId))?.agentId ?? (await getChargeById(chargeId))?.agentId;
  return agentId === undefined ? undefined : getCharge(agentId, chargeId);
}
