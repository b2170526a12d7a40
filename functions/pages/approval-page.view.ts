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
import { NOT_SETTLED, type PurchaseTerms } from '../core/purchases';
import { html } from '../http/html';
import { htmlPage, seeOther } from '../http/page';
import type { ApprovalOutcome, ApprovalPage } from '../use-cases/charges/approval-page';
import { type ApprovalRefusal, DECLINED } from '../use-cases/identity/payers';

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

/**
 * What the page says, by what is being approved. A charge pays the agent; an x402 purchase (DESIGN
 * §22) pays the seller the agent buys from, so its page never says the agent was paid.
 */
interface Words {
  headings: Readonly<Record<PageState, string>>;
  refusedHeading: string;
  /** The pending page's first sentence (the service's name inserted). */
  ask: (service: string) => string;
  outcomes: Readonly<Record<Exclude<PageState, 'pending'>, string>>;
  /** Why it can no longer be approved, in plain words for its payer (the API's 403 errors: payers.ts). */
  refusals: Readonly<Record<ApprovalRefusal, string>>;
  title: { pending: string; done: string };
}

const CHARGE_WORDS: Words = {
  headings: { pending: 'Approve this charge?', approved: 'Approved', declined: 'Declined', failed: 'Not completed', expired: 'Expired' },
  refusedHeading: 'This charge can no longer be approved',
  ask: (service) =>
    `An agent asks to charge your ${service} account. The amount is already held from your balance: Approve pays the agent, Decline gives it back.`,
  outcomes: {
    approved: 'This charge was approved and the agent has been paid.',
    declined: 'This charge was declined. Nothing was paid.',
    failed: 'This charge did not go through. Nothing was paid.',
    expired: 'This charge was not approved in time. Nothing was paid.',
  },
  refusals: {
    agentDisabled:
      'This charge can no longer be approved: the agent has been disabled by the service, so no money can go to it. You can decline it to release the held amount.',
    grantRevoked:
      'This charge can no longer be approved: you revoked the permission (grant) the agent made it with. You can decline it to release the held amount.',
    grantExpired:
      'This charge can no longer be approved: the permission (grant) the agent made it with has ended. You can decline it to release the held amount.',
  },
  title: { pending: 'Approve a charge', done: 'Charge' },
};

const PURCHASE_WORDS: Words = {
  headings: { pending: 'Approve this purchase?', approved: 'Approved', declined: 'Declined', failed: 'Not completed', expired: 'Expired' },
  refusedHeading: 'This purchase can no longer be approved',
  ask: (service) =>
    `An agent asks to buy from an x402 seller with your ${service} account. The amount is already held from your balance: Approve pays the seller, Decline gives it back.`,
  outcomes: {
    approved: 'This purchase was approved. The seller is paid when the payment reaches it; if it never does, the held amount comes back.',
    declined: 'This purchase was declined. Nothing was paid.',
    failed: 'This purchase did not go through. Nothing was paid.',
    expired: 'This purchase was not approved in time. Nothing was paid.',
  },
  refusals: {
    agentDisabled:
      'This purchase can no longer be approved: the agent has been disabled by the service, so it can no longer buy for you. You can decline it to release the held amount.',
    grantRevoked:
      'This purchase can no longer be approved: you revoked the permission (grant) the agent made it with. You can decline it to release the held amount.',
    grantExpired:
      'This purchase can no longer be approved: the permission (grant) the agent made it with has ended. You can decline it to release the held amount.',
  },
  title: { pending: 'Approve a purchase', done: 'Purchase' },
};

/** The outcome sentence: a purchase's depends on whether the seller was paid, or never took the payment. */
function outcome(charge: Charge, state: Exclude<PageState, 'pending'>, words: Words): string {
  if (charge.purchase && state === 'approved' && charge.status === 'SUCCESS')
    return 'This purchase was approved and the seller has been paid.';
  if (charge.purchase && state === 'expired' && charge.failureReason === NOT_SETTLED)
    return 'This purchase was approved, but the seller did not take the payment in time. Nothing was paid; the held amount is back in your balance.';
  return words.outcomes[state];
}

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
  const words = charge.purchase ? PURCHASE_WORDS : CHARGE_WORDS;
  const refused = state === 'pending' ? refusal : undefined;
  const agentName = agent?.name ?? charge.agentName ?? charge.agentId;
  const intro =
    state !== 'pending'
      ? html`<p class="state">${outcome(charge, state, words)}</p>`
      : refused
        ? html`<p class="state">${words.refusals[refused]}</p>`
        : html`<p class="state">${words.ask(config().SERVICE_NAME)}</p>`;
  const body = html`<h1>${refused ? words.refusedHeading : words.headings[state]}</h1>
${intro}
<dl>
<dt>Agent</dt><dd>${agentName}</dd>
${agent && html`<dt>Website</dt><dd><a href="${agent.website}" rel="noopener noreferrer nofollow">${agent.website}</a></dd>`}
${charge.purchase && purchaseRows(charge.purchase)}
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
  return htmlPage(200, state === 'pending' ? words.title.pending : `${words.title.done} ${words.headings[state].toLowerCase()}`, body);
}

/** Who a purchase pays and for what: the seller's address (never a link: the agent wrote it) and the resource it named. */
function purchaseRows(purchase: PurchaseTerms) {
  return html`<dt>Seller</dt><dd>${purchase.requirements.payTo}</dd>
${purchase.resource && html`<dt>For</dt><dd>${purchase.resource.description || purchase.resource.url}${purchase.resource.description ? html` (${purchase.resource.url})` : ''}</dd>`}`;
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
