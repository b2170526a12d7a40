/**
 * The approval page (docs/design.md §11, docs/approvals.md): `GET /approve/{token}` shows the
 * charge the link was made for; `POST` approves or declines it through the same `settle()` as the
 * user API and the sweeper, so exactly one of them wins and the money moves once. The token is
 * the whole authority (no key, no cookie): whoever holds the link may decide, once.
 */
import type { Charge } from '../core/charges';
import { ConflictError, NotFoundError } from '../core/errors';
import { seeOther } from '../http/html';
import type { HttpResult } from '../http/response';
import { getAgentById } from '../store/agent.repository';
import { getPendingCharge } from '../store/charge-pending.repository';
import { getCharge, getChargeById } from '../store/charge-read.repository';
import { chargePage, invalidLinkPage } from './approval-page.view';
import { chargeOfToken } from './approval-token';
import { APPROVED, DECLINED, settle } from './payers';

/** GET /approve/{token}: the charge awaiting a decision, or the state it ended in; 404 for a bad link. */
export async function showApprovalPage(token: string | undefined): Promise<HttpResult> {
  const chargeId = token === undefined ? undefined : await chargeOfToken(token);
  const charge = chargeId === undefined ? undefined : await currentCharge(chargeId);
  if (!charge) return invalidLinkPage();
  const agent = await getAgentById(charge.agentId);
  return chargePage(charge, agent, new Date());
}

/**
 * POST /approve/{token}: approve or decline, then 303 back to the page, which shows the outcome
 * (post/redirect/get: reloading shows the state rather than posting again). Losing a race to the
 * user API or the sweeper, or a link already used or expired, is not an error here: the page it
 * redirects to shows what happened instead.
 */
export async function decideOnApprovalPage(token: string | undefined, action: 'approve' | 'decline'): Promise<HttpResult> {
  if (token === undefined) return invalidLinkPage();
  const chargeId = await chargeOfToken(token);
  if (chargeId === undefined) return invalidLinkPage();
  try {
    // The token is the authority: it was made for this charge, whoever's it is.
    await settle(chargeId, action === 'approve' ? APPROVED : DECLINED, () => true);
  } catch (error) {
    if (!(error instanceof ConflictError || error instanceof NotFoundError)) throw error;
  }
  // Relative to /…/approve/<token>: this same page, wherever the API is mounted.
  return seeOther(`./${encodeURIComponent(token)}`);
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
