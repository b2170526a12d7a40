/**
 * `/console` Overview (DESIGN §21, §26): balances and held money per currency, the approvals
 * waiting, where money went (own/spend.view.ts: a chart of the last 30 days and this month against
 * last month), the last activity.
 */
import type { Charge } from '../../core/charges';
import { CURRENCIES } from '../../core/money';
import { html } from '../../http/html';
import { readOverview } from '../../use-cases/identity/console';
import { chargeStatusWords, money, when, zoneNote, zoneOf } from '../format';
import type { ConsolePage } from '../page';
import { refusedByLimitNotice } from '../pages/grant-notices';
import { spendWindowStart, summarizeSpend } from '../spend-chart';
import { spendSection } from './spend.view';

export const overviewPage: ConsolePage = async (session, req) => {
  const zone = zoneOf(session);
  const since = spendWindowStart(req.now, zone);
  const { user, last, pendingApprovals, pendingAtLeast, recent, partial, refusedByLimit } = await readOverview(
    session.userId,
    req.now,
    since,
  );
  const spend = summarizeSpend(recent, { now: req.now, zone, partial });
  const empty = CURRENCIES.every((c) => user.balances[c] === 0 && user.held[c] === 0);
  const approvals =
    pendingApprovals === 0
      ? html`<p>Nothing waits for your approval. When an agent asks for more than you allow without asking, it shows up here.</p>`
      : html`<p class="big"><a href="/console/approvals">${pendingAtLeast ? 'At least ' : ''}${pendingApprovals} ${pendingApprovals === 1 ? 'charge waits' : 'charges wait'} for your approval</a></p>`;
  const body = html`${refusedByLimitNotice(refusedByLimit)}<section aria-labelledby="balances"><h2 id="balances">Balances</h2>
<div class="cards">
${CURRENCIES.map(
  (currency) => html`<div class="card">
<h3 class="muted">${currency}</h3>
<p class="big">${money(user.balances[currency], currency)}</p>
<p class="muted">Held for pending charges: ${money(user.held[currency], currency)}</p>
${user.owed[currency] > 0 && html`<p class="muted">Owed after a reversed top-up: ${money(user.owed[currency], currency)}</p>`}
</div>`,
)}
</div>
${empty && html`<p>Your balance is empty. <a href="/console/funds">Add funds</a> so agents can be paid from it.</p>`}
</section>
<section aria-labelledby="approvals"><h2 id="approvals">Approvals</h2>
${approvals}
</section>
${openTabsNote(recent)}
${spendSection(spend, session)}
<section aria-labelledby="activity"><h2 id="activity">Last activity</h2>
${
  last
    ? html`<dl class="facts">
<dt>When</dt><dd>${when(last.createdAt, session)}</dd>
<dt>Agent</dt><dd>${last.agentName ?? last.agentId}</dd>
<dt>Amount</dt><dd>${money(last.amount, last.currency)}</dd>
<dt>Description</dt><dd>${last.description === '' ? '(none)' : last.description}</dd>
<dt>Status</dt><dd>${chargeStatusWords(last)}</dd>
${(last.refundedAmount ?? 0) > 0 && html`<dt>Refunded</dt><dd>${money(last.refundedAmount ?? 0, last.currency)}</dd>`}
</dl>
${zoneNote(session)}
<p><a href="/console/statement">See the statement</a></p>`
    : user.createdAt < since.toISOString()
      ? html`<p>No charges in the last two months. <a href="/console/statement">See the statement</a></p>`
      : html`<p>No charges yet. To let an agent pay from this account, give it a grant on <a href="/console/grants">Grants</a>.</p>`
}
</section>`;
  return { kind: 'page', title: 'Overview', nav: 'overview', body };
};

/**
 * Open tabs (DESIGN §29), from the charges the Overview reads anyway: a tab's hold is a PENDING
 * charge that names its tab, and a tab lives at most a day, well inside the window. What each has
 * used is on the Statement (its open tabs read the tabs themselves): no fourth request here.
 */
function openTabsNote(recent: readonly Charge[]) {
  const open = recent.filter((c) => c.tabId !== undefined && c.status === 'PENDING').length;
  if (open === 0) return html``;
  return html`<section aria-labelledby="tabs"><h2 id="tabs">Open tabs</h2>
<p><a href="/console/statement#tabs-h">${open} open ${open === 1 ? 'tab holds' : 'tabs hold'} money</a> for agents that meter their uses against it; what a tab used is charged when it closes, and the rest comes back.</p>
</section>`;
}
