/**
 * What the approval page shows (docs/approvals.md): the charge awaiting a decision with its two
 * buttons, or the state it ended in. Every value from a client (the agent's name and website, the
 * description) goes through the escaping `html` tag; the link's token is never printed (the form
 * has no `action`, so it posts to the page's own URL).
 */

import { config } from '../config';
import type { ApiResult } from '../contracts/api';
import type { Agent } from '../core/agents';
import type { Charge } from '../core/charges';
import { type Currency, formatAmount, type Minor } from '../core/money';
import type { ApprovalOutcome, ApprovalPage } from '../use-cases/approval-page';
import { type ApprovalRefusal, DECLINED } from '../use-cases/payers';
import { html, htmlPage, seeOther } from './html';

/** GET /approve/{token}'s answer: the charge's page, or 404 for a link that is not one of ours. */
export function approvalPageAnswer(page: ApprovalPage): ApiResult {
  return page.kind === 'charge' ? chargePage(page.charge, page.agent, page.now, page.refusal) : invalidLinkPage();
}

/**
 * POST /approve/{token}'s answer: 303 back to the page, which shows the outcome; an approval the
 * money's own conditions refused is answered at once with the page saying why (403); 404 for a bad link.
 */
export function approvalDecisionAnswer(decision: ApprovalOutcome): ApiResult {
  // Relative to /…/approve/<token>: this same page, wherever the API is mounted.
  if (decision.kind === 'decided') return seeOther(`./${encodeURIComponent(decision.token)}`);
  if (decision.kind === 'refused') {
    const { charge, agent, now, refusal } = decision.page;
    return { ...chargePage(charge, agent, now, refusal), statusCode: 403 };
  }
  return invalidLinkPage();
}

/** Why a charge can no longer be approved, in plain words for its payer (the API's 403 errors: payers.ts). */
const REFUSAL_TEXT: Readonly<Record<ApprovalRefusal, string>> = {
  agentDisabled:
    'This charge can no longer be approved: the agent has been disabled by the service, so no money can go to it. You can decline it to release the held amount.',
  grantRevoked:
    'This charge can no longer be approved: you revoked the permission (grant) the agent made it with. You can decline it to release the held amount.',
  grantExpired:
    'This charge can no longer be approved: the permission (grant) the agent made it with has ended. You can decline it to release the held amount.',
};

/** What the page tells its reader; only `pending` offers a decision. */
export type PageState = 'pending' | 'approved' | 'declined' | 'failed' | 'expired';

export function pageState(charge: Charge, now: Date): PageState {
  switch (charge.status) {
    case 'PENDING':
      // Approved and now waiting for the agent's capture (docs/design.md §12): the payer is done.
      if (charge.pendingReason === 'capture') return 'approved';
      // Past its time even if the sweeper has not run yet: settle() would refuse it too.
      return charge.expiresAt !== undefined && now.toISOString() < charge.expiresAt ? 'pending' : 'expired';
    case 'SUCCESS':
      return 'approved';
    case 'FAILED':
      return charge.failureReason === DECLINED.failureReason ? 'declined' : 'failed';
    case 'EXPIRED':
      return 'expired';
  }
}

const HEADINGS: Readonly<Record<PageState, string>> = {
  pending: 'Approve this charge?',
  approved: 'Approved',
  declined: 'Declined',
  failed: 'Not completed',
  expired: 'Expired',
};

const OUTCOMES: Readonly<Record<Exclude<PageState, 'pending'>, string>> = {
  approved: 'This charge was approved and the agent has been paid.',
  declined: 'This charge was declined. Nothing was paid.',
  failed: 'This charge did not go through. Nothing was paid.',
  expired: 'This charge was not approved in time. Nothing was paid.',
};

/**
 * The page for a charge: its details, and the buttons while it awaits a decision; with `refusal`
 * (it can no longer be approved) only Decline, and why.
 */
export function chargePage(
  charge: Charge,
  agent: Pick<Agent, 'name' | 'website'> | undefined,
  now: Date,
  refusal?: ApprovalRefusal,
): ApiResult {
  const state = pageState(charge, now);
  const refused = state === 'pending' ? refusal : undefined;
  const agentName = agent?.name ?? charge.agentName ?? charge.agentId;
  const intro =
    state !== 'pending'
      ? html`<p class="state">${OUTCOMES[state]}</p>`
      : refused
        ? html`<p class="state">${REFUSAL_TEXT[refused]}</p>`
        : html`<p class="state">An agent asks to charge your ${config().SERVICE_NAME} account. The amount is already held from your balance: Approve pays the agent, Decline gives it back.</p>`;
  const body = html`<h1>${refused ? 'This charge can no longer be approved' : HEADINGS[state]}</h1>
${intro}
<dl>
<dt>Agent</dt><dd>${agentName}</dd>
${agent && html`<dt>Website</dt><dd><a href="${agent.website}" rel="noopener noreferrer nofollow">${agent.website}</a></dd>`}
<dt>Amount</dt><dd class="amount">${displayAmount(charge.amount, charge.currency)}</dd>
<dt>Description</dt><dd>${charge.description === '' ? '(none)' : charge.description}</dd>
${state === 'pending' && charge.expiresAt !== undefined && expiryRow(charge.expiresAt, now)}
</dl>
${
  state === 'pending' &&
  (refused
    ? html`<form method="post">
<button type="submit" name="action" value="decline">Decline</button>
</form>`
    : html`<form method="post">
<button type="submit" name="action" value="approve">Approve</button>
<button type="submit" name="action" value="decline">Decline</button>
</form>`)
}`;
  return htmlPage(200, state === 'pending' ? 'Approve a charge' : `Charge ${HEADINGS[state].toLowerCase()}`, body);
}

/** The answer to a token that is not one of ours: nothing about why, nothing about any charge. */
export function invalidLinkPage(): ApiResult {
  return htmlPage(
    404,
    'This link is not valid',
    html`<h1>This link is not valid</h1>
<p class="state">Check that you opened the whole link from the message you received.</p>`,
  );
}

function expiryRow(expiresAt: string, now: Date) {
  return html`<dt>Expires</dt><dd>in ${timeLeft(Date.parse(expiresAt) - now.getTime())} (<time datetime="${expiresAt}">${utc(expiresAt)}</time>)</dd>`;
}

/**
 * An amount as exact decimal text with its currency, at least two decimals ("15.00 USD",
 * "0.000001 USDC"): formatted from minor units, never through a float.
 */
export function displayAmount(minor: Minor, currency: Currency): string {
  const [whole, fraction = ''] = formatAmount(minor, currency).split('.');
  return `${whole}.${fraction.padEnd(2, '0')} ${currency}`;
}

/** Time left, rounded down so it never promises more than there is ("14 minutes", "2 hours 5 minutes"). */
export function timeLeft(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return 'less than a minute';
  if (minutes < 60) return plural(minutes, 'minute');
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return [plural(hours, 'hour'), minutes % 60 > 0 ? plural(minutes % 60, 'minute') : ''].join(' ').trim();
  const days = Math.floor(hours / 24);
  return [plural(days, 'day'), hours % 24 > 0 ? plural(hours % 24, 'hour') : ''].join(' ').trim();
}

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;

/** `2025-06-01T12:34:56.789Z` → `2025-06-01 12:34:56 UTC`. */
const utc = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
