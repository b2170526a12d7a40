/**
 * The payer's open tabs on the Statement (DESIGN §29: "open tabs show on the console's Overview and
 * Statement"). A tab's hold is already a `Hold` row of the statement; this says what it is for and
 * how much of it the agent has used so far, which no row can (a use moves no money until the tab
 * closes). Read through the API's own operation (`GET /api/v1/users/me/tabs?status=OPEN`): one
 * Query, which the Statement makes only where its rows cannot rule an open tab out
 * (`mayHoldOpenTab` in statement-facts.ts; docs/console.md "What the Statement and Limits pages cost").
 */
import { StoredReply } from '../../contracts/api';
import { formatAmount } from '../../core/money';
import { html, type SafeHtml } from '../../http/html';
import { runFor } from '../../operations/execute';
import { userListTabsOperation } from '../../operations/tabs';
import type { ConsoleSession } from '../page';
import { payerOf } from './caller';
import { money, tableRegion, when } from './ui';

/** The most open tabs the section lists (a payer with more is told so). */
const SHOWN = 10;

/** The payer's newest open tabs, and whether they have more. */
export async function readOpenTabs(session: ConsoleSession) {
  const page = await runFor(userListTabsOperation, payerOf(session), { query: { status: 'OPEN', limit: String(SHOWN) } });
  // A read takes no Idempotency-Key: never a stored reply.
  if (page instanceof StoredReply) throw new Error('a list of tabs answered a stored reply');
  return page;
}

export type OpenTabs = Awaited<ReturnType<typeof readOpenTabs>>;

export function openTabsSection(page: OpenTabs, session: ConsoleSession): SafeHtml {
  if (page.tabs.length === 0) return html``;
  const rows = page.tabs.map((t) => {
    const m = (minor: number) => money(formatAmount(minor, t.currency), t.currency);
    return html`<tr>
<td data-label="Agent">${t.agentName ?? t.agentId}</td>
<td data-label="For" class="wrap">${t.description || html`<span class="muted">—</span>`}</td>
<td data-label="Used" class="num">${m(t.used)} of ${m(t.limit)}</td>
<td data-label="Closes by">${when(t.expiresAt, session)}</td>
</tr>`;
  });
  // A plain section: the table's own region carries the name (two nested regions both called
  // "Open tabs" would be read twice).
  return html`<section>
<h2 id="tabs-h">Open tabs</h2>
<p>An agent with an open tab meters its uses against money held once. When the tab closes, what it used is charged and the rest comes back to your balance.</p>
${tableRegion(
  'Open tabs',
  html`<table>
<thead><tr><th scope="col">Agent</th><th scope="col">For</th><th scope="col" class="num">Used</th><th scope="col">Closes by</th></tr></thead>
<tbody>${rows}</tbody>
</table>`,
)}
${page.nextCursor ? html`<p class="muted">Showing your ${SHOWN} newest open tabs.</p>` : html``}
</section>`;
}
