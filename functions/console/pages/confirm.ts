/**
 * Confirmations of the pages' destructive actions (DESIGN §26: a destructive action asks first and
 * says what will end): `Rotate account key` (Developers) and `Revoke` (Grants) are links to these
 * GET pages, whose form posts the action itself (its route is the page's own: developers.ts,
 * grants.ts) with the session's CSRF token, as every console form. No script: a page and a form.
 * `Cancel` goes back. The console's CSRF and Origin rules keep the POST out of another site's
 * reach, so the only way to it is this page's button.
 */

import { grantStatus } from '../../core/grants';
import { formatAmount, type Minor } from '../../core/money';
import { periodsOf } from '../../core/policy';
import { html, type SafeHtml } from '../../http/html';
import { rotationReach } from '../../use-cases/identity/account-key';
import { readGrant } from '../../use-cases/identity/grants';
import type { ConsolePage, ConsoleRoute } from '../page';
import { csrfField, money, notFound, onceField, page, refusal, when, zoneNote } from './ui';

const DEVELOPERS = '/console/developers';
const GRANTS = '/console/grants';

const count = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** GET /console/developers/rotate: what a rotation ends, by number, before the button. */
const confirmRotation: ConsolePage = async (session, req) => {
  // The list counts sessions whatever their hash: this request's own is among them.
  const reach = await rotationReach({ userId: session.userId, hash: '' }, req.now);
  const ends: SafeHtml[] = [
    html`<li><strong>${count(reach.activeGrants, 'active grant', 'active grants')}</strong> revoked: ${reach.activeGrants === 1 ? 'its agent' : 'their agents'} can no longer charge you.</li>`,
    html`<li><strong>${count(reach.webhooks, 'webhook endpoint', 'webhook endpoints')}</strong> deleted: ${reach.webhooks === 1 ? 'it receives' : 'they receive'} no more events.</li>`,
  ];
  if (reach.openCharges > 0) {
    ends.push(
      html`<li><strong>${count(reach.openCharges, 'open charge', 'open charges')}</strong> made with the account key (waiting for your approval or for the agent's capture) failed, the held money back in your balance.</li>`,
    );
  }
  ends.push(
    html`<li><strong>${count(reach.sessions, 'session', 'sessions')}</strong> signed out, this one included: you sign in again with the new key or a passkey of yours.</li>`,
  );
  if (reach.keyBackedPasskeys.length > 0) {
    ends.push(
      html`<li><strong>${count(reach.keyBackedPasskeys.length, 'passkey', 'passkeys')}</strong> added with the account key removed: ${reach.keyBackedPasskeys.join(', ')}.</li>`,
    );
  }
  return page(
    'Rotate your account key?',
    'developers',
    html`<p>Your account key is replaced. The new key is shown once, on the next page; the old one stops working at once. Whoever held the old key could have made grants, endpoints and passkeys, so rotating also ends them:</p>
<ul class="ends">${ends}</ul>
<p>Grants and endpoints you still want, you make again afterwards.</p>
<form method="post" action="${DEVELOPERS}/rotate" class="confirm">
${csrfField(session)}${onceField()}
<div class="actions"><button type="submit" class="danger">Rotate account key</button><a class="button" href="${DEVELOPERS}">Cancel</a></div>
</form>`,
  );
};

/** GET /console/grants/:id/revoke: the grant, what it has left, and what revoking ends. */
const confirmRevoke: ConsolePage = async (session, req) => {
  const back = { href: GRANTS, label: 'Back to Grants' };
  let grant: Awaited<ReturnType<typeof readGrant>>;
  try {
    grant = await readGrant(session.userId, req.params.id);
  } catch (error) {
    if (refusal(error).status === 404) return notFound('grants', 'Grant', back);
    throw error;
  }
  const m = (minor: Minor) => money(formatAmount(minor, grant.currency), grant.currency);
  const status = grantStatus(grant, req.now);
  const about = html`<dl class="facts">
<dt>Agent</dt><dd>${grant.agentName} <span class="mono muted">${grant.agentId}</span></dd>
<dt>Currency</dt><dd>${grant.currency}</dd>
${grant.description ? html`<dt>Description</dt><dd class="wrap">${grant.description}</dd>` : html``}
<dt>Created</dt><dd>${when(grant.createdAt, session)}</dd>
<dt>Spent so far</dt><dd>${m(grant.spent)}</dd>
<dt>What it has left</dt><dd>${leftOf(grant, req.now, m)}</dd>
<dt>Expires</dt><dd>${grant.expiresAt ? when(grant.expiresAt, session) : 'never (until revoked)'}</dd>
</dl>
${zoneNote(session)}`;
  if (status !== 'active') {
    return page(
      status === 'revoked' ? 'Grant already revoked' : 'Grant expired',
      'grants',
      html`<p>This grant ${status === 'revoked' ? 'was revoked' : 'has expired'}: there is nothing to revoke.</p>${about}<p><a href="${GRANTS}#${grant.id}">Back to Grants</a></p>`,
    );
  }
  return page(
    'Revoke this grant?',
    'grants',
    html`<p>${grant.agentName} can no longer charge you in ${grant.currency} with this grant's key, from the moment you revoke it. Charges it made stay as they are; a charge of it still waiting for your approval can no longer be approved (decline it to release the held money). To let the agent charge you again, create a new grant.</p>
${about}
<form method="post" action="${GRANTS}/${grant.id}/revoke" class="confirm">
${csrfField(session)}
<div class="actions"><button type="submit" class="danger">Revoke grant</button><a class="button" href="${GRANTS}#${grant.id}">Cancel</a></div>
</form>`,
  );
};

/** What a grant may still spend, per limit it has (the daily and monthly ones in UTC, as charges count them). */
function leftOf(grant: Awaited<ReturnType<typeof readGrant>>, now: Date, m: (minor: Minor) => string): SafeHtml {
  const { day, month } = periodsOf(now);
  const parts: string[] = [];
  const { perCharge, daily, monthly, total } = grant.limits;
  if (total !== undefined) parts.push(`${m(Math.max(0, total - grant.spent))} of ${m(total)} in total`);
  if (monthly !== undefined) {
    const spent = grant.spentMonth?.p === month ? grant.spentMonth.v : 0;
    parts.push(`${m(Math.max(0, monthly - spent))} of ${m(monthly)} this month (UTC)`);
  }
  if (daily !== undefined) {
    const spent = grant.spentDay?.p === day ? grant.spentDay.v : 0;
    parts.push(`${m(Math.max(0, daily - spent))} of ${m(daily)} today (UTC)`);
  }
  if (perCharge !== undefined) parts.push(`at most ${m(perCharge)} a charge`);
  if (parts.length === 0) return html`no limits of its own (your Limits still apply)`;
  return html`${parts.join('; ')}`;
}

export const CONFIRM_ROUTES: readonly ConsoleRoute[] = [
  { method: 'GET', path: `${DEVELOPERS}/rotate`, page: confirmRotation },
  { method: 'GET', path: `${GRANTS}/:id/revoke`, page: confirmRevoke },
];
