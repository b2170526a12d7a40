/**
 * The console's limit notices (DESIGN §27, docs/webhooks.md "Grant limit alerts"): what the
 * `grant.limit.approaching` / `.reached` webhooks tell the payer, shown on Grants (from the grants
 * the page already lists: no extra request) and, as far as the charges it already reads say, on
 * Overview (a recent charge under a grant refused by a spending limit: Overview's budget is 3
 * requests, DESIGN §21, so it does not list grants). Apart from the pages so their other work
 * merges without touching it.
 */
import { ALERT_LIMITS, approaching, spentInWindow, windowOf } from '../../core/grant-alerts';
import { type Grant, grantStatus } from '../../core/grants';
import { formatAmount } from '../../core/money';
import { html, type SafeHtml } from '../../http/html';
import { money } from './ui';

const WINDOW_WORDS = { hourly: 'this hour (UTC)', daily: 'today (UTC)', monthly: 'this month (UTC)', total: 'in total' } as const;

/** One line per active grant and windowed limit at or above 80% in its current window. */
export function grantLimitNotices(grants: readonly Grant[], now: Date): SafeHtml {
  const lines: SafeHtml[] = [];
  for (const g of grants) {
    if (grantStatus(g, now) !== 'active') continue;
    for (const limit of ALERT_LIMITS) {
      const max = g.limits[limit];
      if (max === undefined) continue;
      const spent = spentInWindow(g, limit, windowOf(limit, now));
      if (!approaching(spent, max)) continue;
      const m = (minor: number) => money(formatAmount(minor, g.currency), g.currency);
      const state = spent >= max ? 'has reached' : 'is near';
      lines.push(
        html`<li><a href="#${g.id}">${g.agentName}</a> ${state} its ${limit} limit: ${m(spent)} of ${m(max)} ${WINDOW_WORDS[limit]}.</li>`,
      );
    }
  }
  if (lines.length === 0) return html``;
  return html`<div class="notice" role="status"><p><strong>Grant limits</strong></p><ul>${lines}</ul></div>`;
}

/** Overview's notice: a charge made under a grant was refused by a spending limit in the last day (use-cases/identity/console.ts). */
export function refusedByLimitNotice(refused: boolean | undefined): SafeHtml {
  if (!refused) return html``;
  return html`<div class="notice" role="status"><p>A charge under a grant was refused by a spending limit. <a href="/console/grants">See Grants</a> for how much each grant has left.</p></div>`;
}
