/**
 * `/console/approvals` Approvals (DESIGN §21): each PENDING charge that waits for the payer, with
 * `Approve` and `Decline` — the very use cases of POST /api/v1/users/me/charges/{id}/approve and
 * /decline, so a charge id of another payer is `charge not found` here too.
 */
import { StoredReply } from '../../contracts/api';
import { chargeView } from '../../contracts/views';
import { PURCHASE_ID } from '../../core/purchases';
import { html } from '../../http/html';
import type { RefusalCode } from '../../messages/catalogue';
import { isRefusal } from '../../messages/refusal';
import { runFor } from '../../operations/execute';
import { userApproveChargeOperation, userDeclineChargeOperation } from '../../operations/payers';
import { listAwaitingApproval } from '../../use-cases/identity/console';
import { money, timeLeft, when, zoneNote } from '../format';
import { csrfField } from '../layout';
import type { ConsolePage, ConsoleRequest, ConsoleResult, ConsoleRoute, ConsoleSession } from '../page';
import { payerOf } from '../pages/caller';

const NOTICES: Readonly<Record<string, string>> = {
  approved: 'Approved: the agent has been paid from the held amount.',
  // An x402 purchase pays the seller the agent buys from, once its payment is on chain (DESIGN §22).
  'approved-purchase': 'Approved: the seller is paid from the held amount once the payment reaches it.',
  declined: 'Declined: the held amount is back in your balance.',
};

/** Why a decision could not be made, in a payer's words, by the API's refusal (payers.ts); another refusal shows its own text. */
const REFUSALS: Readonly<Partial<Record<RefusalCode, string>>> = {
  chargeNotFound: 'There is no such charge waiting for you.',
  chargeExpired: 'This charge was not decided in time: it has expired and nothing was paid.',
  chargeNotPending: 'This charge has already been decided.',
  agentDisabled: 'This charge can no longer be approved: the agent has been disabled. Decline it to release the held amount.',
  grantRevoked: 'This charge can no longer be approved: you revoked the grant it was made under. Decline it to release the held amount.',
  grantExpired: 'This charge can no longer be approved: the grant it was made under has ended. Decline it to release the held amount.',
};

async function render(
  session: ConsoleSession,
  req: ConsoleRequest,
  refused?: { status: number; code: RefusalCode; message: string },
): Promise<ConsoleResult> {
  const { charges, more } = await listAwaitingApproval(session.userId, req.now);
  const notice = NOTICES[req.query.done ?? ''];
  const body = html`${notice && html`<p class="notice" role="status">${notice}</p>`}
${refused && html`<p class="error" role="alert">${REFUSALS[refused.code] ?? refused.message}</p>`}
${
  charges.length === 0
    ? html`<p>Nothing waits for your approval. An agent's charge above the approval amount of your limits or of its grant waits here until you decide, or until its time runs out.</p>`
    : html`<p>The amount of each is already held from your balance. Approve pays the agent (for a purchase, the seller it buys from); Decline gives it back.</p>
<ul class="items">
${charges.map(
  (c) => html`<li>
<h2>${c.agentName ?? c.agentId}</h2>
<dl class="facts">
${c.purchase && html`<dt>Buys from</dt><dd>${c.purchase.requirements.payTo}${c.purchase.resource && ` (${c.purchase.resource.url})`}</dd>`}
<dt>Amount</dt><dd>${money(c.amount, c.currency)}</dd>
<dt>Description</dt><dd>${c.description === '' ? '(none)' : c.description}</dd>
<dt>Asked</dt><dd>${when(c.createdAt, session)}</dd>
<dt>Time left</dt><dd>${timeLeft(Date.parse(c.expiresAt ?? '') - req.now.getTime())}</dd>
</dl>
<div class="actions">
<form class="inline" method="post" action="/console/approvals/${encodeURIComponent(c.id)}/approve">${csrfField(session.csrfToken)}<button type="submit" class="primary">Approve</button></form>
<form class="inline" method="post" action="/console/approvals/${encodeURIComponent(c.id)}/decline">${csrfField(session.csrfToken)}<button type="submit">Decline</button></form>
</div>
</li>`,
)}
</ul>
${zoneNote(session)}
${more && html`<p class="muted">Older pending charges may follow once these are decided.</p>`}`
}`;
  return { kind: 'page', title: 'Approvals', nav: 'approvals', body, ...(refused ? { status: refused.status } : {}) };
}

export const approvalsPage: ConsolePage = (session, req) => render(session, req);

/** Approve or Decline: 303 back to the list with a notice; a refusal shows the list again with why (its API status). */
const decide =
  (action: 'approve' | 'decline'): ConsolePage =>
  async (session, req) => {
    try {
      const op = action === 'approve' ? userApproveChargeOperation : userDeclineChargeOperation;
      const decided = await runFor(op, payerOf(session), { params: { id: req.params.id } });
      // The answer names a purchase by its own xp… id: approving one pays its seller, not the agent.
      const purchase = !(decided instanceof StoredReply) && PURCHASE_ID.test(chargeView(decided, undefined).id);
      const done = action === 'decline' ? 'declined' : purchase ? 'approved-purchase' : 'approved';
      return { kind: 'redirect', location: `/console/approvals?done=${done}` };
    } catch (error) {
      if (isRefusal(error) && error.statusCode < 500)
        return render(session, req, { status: error.statusCode, code: error.code, message: error.message });
      throw error;
    }
  };

export const APPROVAL_ROUTES: readonly ConsoleRoute[] = [
  { method: 'GET', path: '/console/approvals', page: approvalsPage },
  { method: 'POST', path: '/console/approvals/:id/approve', page: decide('approve') },
  { method: 'POST', path: '/console/approvals/:id/decline', page: decide('decline') },
];
