/**
 * What the consent page shows (DESIGN §16, docs/grants.md): the agent's request — its name and
 * website, the currency, the limits, the lifetime and the description — with a password field for
 * the payer's account key and Allow / Deny; or the state the request ended in. It follows the
 * approval page's rules through the same shared pieces (http/html.ts): every value escaped by the
 * `html` tag, the same document shell, stylesheet and security headers (strict CSP with
 * frame-ancestors 'none', no-store, no-referrer), no JavaScript. The link's token is never
 * printed (the form has no `action`: it posts to the page's own URL).
 */

import type { ApiResult } from '../contracts/api';
import type { GrantScope } from '../core/grant-scope';
import type { GrantLimits } from '../core/grants';
import type { Currency } from '../core/money';
import { html } from '../http/html';
import { htmlPage, seeOther } from '../http/page';
import type { ConsentPage } from '../use-cases/identity/grant-requests';
import { displayAmount, timeLeft } from './approval-page.view';

const HEADINGS = {
  pending: 'Give this agent a grant?',
  approved: 'Allowed',
  claimed: 'Allowed',
  denied: 'Denied',
  expired: 'Expired',
} as const;

const OUTCOMES = {
  approved: 'You allowed this request. The agent can now charge you within these limits, until you revoke the grant.',
  claimed: 'You allowed this request. The agent can now charge you within these limits, until you revoke the grant.',
  denied: 'You denied this request. The agent got nothing.',
  expired: 'This request was not answered in time. The agent got nothing.',
} as const;

const LIMIT_LABELS: Readonly<Record<keyof GrantLimits, string>> = {
  perCharge: 'Per charge',
  hourly: 'Per hour (UTC)',
  daily: 'Per day (UTC)',
  monthly: 'Per month (UTC)',
  total: 'In total',
};

/**
 * The scope the agent asks for (DESIGN §27): the payer sees every payee and host before allowing,
 * and that nothing else can be paid (no plain charges either: docs/grants.md "Scope").
 */
function scopeRows(scope: GrantScope) {
  return html`${scope.payees && html`<dt>Only to payees</dt><dd class="mono">${scope.payees.join(', ')}</dd>`}
${scope.hosts && html`<dt>Only on hosts</dt><dd class="wrap">${scope.hosts.join(', ')}</dd>`}
<dt>Nothing else</dt><dd>purchases elsewhere and plain charges are refused</dd>`;
}

/** The page for a consent link's state, as an HTTP answer. */
/**
 * Who is looking (DESIGN §21): a payer signed in to the console (Allow / Deny with the session's
 * token, no key field), or nobody known (a way to sign in with a passkey and come back, and the
 * account-key field for payers without a console account).
 */
export type ConsentViewer = { signedIn: { csrfToken: string } } | { loginUrl: string };

export function renderConsentPage(page: ConsentPage, token: string | undefined, viewer?: ConsentViewer): ApiResult {
  if (page.kind === 'invalid') return invalidConsentLinkPage();
  // Post/redirect/get: the page it points to shows the outcome; reloading shows, never posts again.
  if (page.kind === 'decided') return seeOther(`./${encodeURIComponent(token ?? '')}`);
  const { request, status, agent, refused } = page;
  const { terms } = request;
  const currency: Currency = terms.currency;
  const limits = (Object.keys(LIMIT_LABELS) as (keyof GrantLimits)[]).filter((name) => terms.limits?.[name] !== undefined);
  const body = html`<h1>${HEADINGS[status]}</h1>
${status === 'pending' ? html`<p class="state">An agent asks for a grant: it may charge your account within these limits, with its own key. It never sees your account key.</p>` : html`<p class="state">${OUTCOMES[status]}</p>`}
${refused && html`<p class="state" role="alert"><strong>${refused.message}</strong></p>`}
<dl>
<dt>Agent</dt><dd>${agent?.name ?? request.agentId}</dd>
${agent && html`<dt>Website</dt><dd><a href="${agent.website}" rel="noopener noreferrer nofollow">${agent.website}</a></dd>`}
<dt>Currency</dt><dd>${currency}</dd>
${limits.length === 0 ? html`<dt>Limits</dt><dd>none: any amount up to your balance</dd>` : limits.map((name) => html`<dt>${LIMIT_LABELS[name]}</dt><dd class="amount">${displayAmount(terms.limits?.[name] as number, currency)}</dd>`)}
${terms.approvalAbove !== undefined && html`<dt>Your approval</dt><dd>for each charge above ${displayAmount(terms.approvalAbove, currency)}</dd>`}
${terms.scope && scopeRows(terms.scope)}
<dt>Lifetime</dt><dd>${terms.ttlSeconds === undefined ? 'until you revoke it' : timeLeft(terms.ttlSeconds * 1000)}</dd>
<dt>Description</dt><dd>${terms.description ? terms.description : '(none)'}</dd>
${status === 'pending' && html`<dt>Link expires</dt><dd>in ${timeLeft(Date.parse(request.expiresAt) - Date.now())}</dd>`}
</dl>
${status === 'pending' && decisionForm(viewer)}`;
  const answer = htmlPage(
    refused?.statusCode ?? 200,
    status === 'pending' ? 'Give an agent a grant' : `Grant request ${HEADINGS[status].toLowerCase()}`,
    body,
  );
  // same-origin, not no-referrer: with no-referrer Chromium posts the form with `Origin: null`, and
  // a signed-in payer's Allow is checked against the console's origin (DESIGN §21). Links off the
  // site (the agent's website) still get no Referer, so the link's token never leaves it.
  return { ...answer, headers: { ...answer.headers, 'referrer-policy': 'same-origin' } };
}

function decisionForm(viewer: ConsentViewer | undefined) {
  if (viewer && 'signedIn' in viewer) {
    return html`<form method="post">
<input type="hidden" name="csrf" value="${viewer.signedIn.csrfToken}">
<button type="submit" name="action" value="allow">Allow</button>
<button type="submit" name="action" value="deny">Deny</button>
</form>`;
  }
  return html`${viewer && html`<p class="state"><a href="${viewer.loginUrl}">Sign in with a passkey</a> to answer from your console account, or use your account key:</p>`}
<form method="post">
<p class="field"><label for="accountKey">Your account key (uk_live_…), to allow</label>
<input id="accountKey" name="accountKey" type="password" autocomplete="off" spellcheck="false"></p>
<button type="submit" name="action" value="allow">Allow</button>
<button type="submit" name="action" value="deny" formnovalidate>Deny</button>
</form>`;
}

/** The answer to a token that is not one of ours: nothing about why, nothing about any request. */
export function invalidConsentLinkPage(): ApiResult {
  return htmlPage(
    404,
    'This link is not valid',
    html`<h1>This link is not valid</h1>
<p class="state">Check that you opened the whole link the agent gave you.</p>`,
  );
}
