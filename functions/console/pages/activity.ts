/**
 * Activity (DESIGN §21): every charge to this payer, newest first, refusals included (the payer's
 * authorization log), through the API's `listMyCharges`. Filters are query parameters, so a
 * filtered view has a URL; `Next page` follows the API's cursor; `Download CSV` gives the filtered
 * rows (all of them, up to CSV_MAX_ROWS) as a spreadsheet reads them.
 */

import * as z from 'zod';
import type { userChargeView } from '../../contracts/views';
import { ID_PATTERNS } from '../../core/ids';
import type { Currency } from '../../core/money';
import { CURRENCIES } from '../../core/money';
import { html, type SafeHtml } from '../../http/html';
import { refuse } from '../../messages/refusal';
import { listMyCharges } from '../../use-cases/identity/payers';
import { chargeStatusWords } from '../format';
import type { ConsolePage, ConsoleRequest, ConsoleRoute, ConsoleSession } from '../page';
import { agentLabel, type KnownAgent, knownAgents } from './agents';
import { csvFile } from './csv';
import { errorBox, money, page, plainAmount, refusal, tableRegion, when, zoneNote } from './ui';

type ChargeView = ReturnType<typeof userChargeView> & { approvalUrl?: string };

const ACTIVITY = '/console/activity';
const PAGE_SIZE = 25;
/** A download reads the history 100 charges a request; past this many rows it stops (and says so in the file name). */
export const CSV_MAX_ROWS = 10_000;
export const CSV_HEADER = ['id', 'createdAt', 'agent', 'description', 'amount', 'currency', 'status'] as const;

const STATUSES = ['SUCCESS', 'PENDING', 'FAILED', 'EXPIRED'] as const;
const STATUS_LABELS: Readonly<Record<(typeof STATUSES)[number], string>> = {
  SUCCESS: 'Succeeded',
  PENDING: 'Pending',
  FAILED: 'Failed or refused',
  EXPIRED: 'Expired',
};

/** The filters, as the page's query parameters (empty values are "all"). */
const filtersSchema = z.object({
  status: z.enum(STATUSES).optional(),
  agent: z.string().regex(ID_PATTERNS.agent).optional(),
  currency: z.enum(['USD', 'USDC']).optional(),
  cursor: z.string().max(512).optional(),
});
type Filters = z.infer<typeof filtersSchema>;

function readFilters(query: ConsoleRequest['query']): Filters {
  const given = Object.fromEntries(['status', 'agent', 'currency', 'cursor'].flatMap((k) => (query[k] ? [[k, query[k]]] : []))) as Record<
    string,
    string
  >;
  const parsed = filtersSchema.safeParse(given);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw refuse('consoleFilterInvalid', String(issue?.path[0] ?? ''));
  }
  return parsed.data;
}

/** The query string of a view (without `cursor` unless given). */
function queryOf(f: Filters, extra: { cursor?: string } = {}): string {
  const params = new URLSearchParams();
  if (f.status) params.set('status', f.status);
  if (f.agent) params.set('agent', f.agent);
  if (f.currency) params.set('currency', f.currency);
  if (extra.cursor) params.set('cursor', extra.cursor);
  const text = params.toString();
  return text ? `?${text}` : '';
}

async function chargesPage(userId: string, f: Filters, baseUrl: string, limit: number, cursor?: string) {
  const result = await listMyCharges(userId, { limit, ...(cursor ? { cursor } : {}), ...(f.status ? { status: f.status } : {}) }, baseUrl, {
    ...(f.agent ? { agentId: f.agent } : {}),
    ...(f.currency ? { currency: f.currency as Currency } : {}),
  });
  return result as { data: ChargeView[]; nextCursor: string | null };
}

const activityPage: ConsolePage = async (session, req) => {
  let filters: Filters;
  try {
    filters = readFilters(req.query);
  } catch (error) {
    return page('Activity', 'activity', html`${errorBox(refusal(error).message)}<p><a href="${ACTIVITY}">Show all activity</a></p>`, 400);
  }
  let list: { data: ChargeView[]; nextCursor: string | null };
  try {
    list = await chargesPage(session.userId, filters, req.baseUrl, PAGE_SIZE, filters.cursor);
  } catch (error) {
    // A cursor that is not one of this payer's (edited, or another payer's): 400, nothing shown.
    const { status, message } = refusal(error);
    return page(
      'Activity',
      'activity',
      html`${errorBox(message)}<p><a href="${ACTIVITY}${queryOf(filters)}">Start from the newest</a></p>`,
      status,
    );
  }
  const { agents } = await knownAgents(session.userId, req.baseUrl);
  const filtered = Boolean(filters.status || filters.agent || filters.currency);
  const body = html`
${filterForm(filters, agents)}
<p class="actions"><a class="button secondary" href="${ACTIVITY}/csv${queryOf(filters)}" download>Download CSV</a></p>
${list.data.length === 0 ? emptyState(filters, filtered, list.nextCursor !== null) : chargeTable(list.data, session)}
<nav class="pager" aria-label="Pages of activity">
${filters.cursor ? html`<a href="${ACTIVITY}${queryOf(filters)}">Newest</a>` : html``}
${list.nextCursor ? html`<a href="${ACTIVITY}${queryOf(filters, { cursor: list.nextCursor })}" rel="next">Next page</a>` : html``}
</nav>`;
  return page('Activity', 'activity', body);
};

function emptyState(f: Filters, filtered: boolean, more: boolean): SafeHtml {
  if (more)
    return html`<p class="empty">No matching charges in this part of your history. Use <strong>Next page</strong> to look further back.</p>`;
  if (filtered) return html`<p class="empty">No charges match these filters. <a href="${ACTIVITY}">Show all activity</a>.</p>`;
  if (f.cursor) return html`<p class="empty">That was the end of your history.</p>`;
  return html`<p class="empty">No charges yet. When an agent charges you, it shows here. To let an agent charge you, <a href="/console/funds">add funds</a> and <a href="/console/grants">give it a grant</a>.</p>`;
}

function filterForm(f: Filters, agents: readonly KnownAgent[]): SafeHtml {
  const option = (value: string, label: string, selected: boolean) =>
    html`<option value="${value}"${selected ? html` selected` : html``}>${label}</option>`;
  const agentOptions = [...agents];
  if (f.agent && !agents.some((a) => a.id === f.agent)) agentOptions.push({ id: f.agent, name: undefined, currencies: [] });
  return html`
<form class="filters" method="get" action="${ACTIVITY}" aria-label="Filter activity">
<div class="field"><label for="f-status">Status</label>
<select id="f-status" name="status">${option('', 'All statuses', !f.status)}${STATUSES.map((s) => option(s, STATUS_LABELS[s], f.status === s))}</select></div>
<div class="field"><label for="f-agent">Agent</label>
<select id="f-agent" name="agent">${option('', 'All agents', !f.agent)}${agentOptions.map((a) => option(a.id, agentLabel(a), f.agent === a.id))}</select></div>
<div class="field"><label for="f-currency">Currency</label>
<select id="f-currency" name="currency">${option('', 'All currencies', !f.currency)}${CURRENCIES.map((c) => option(c, c, f.currency === c))}</select></div>
<button type="submit">Apply filters</button>
</form>`;
}

const STATUS_CLASSES: Readonly<Record<ChargeView['status'], string>> = {
  PENDING: 'status-pending',
  SUCCESS: 'status-success',
  FAILED: 'status-failed',
  EXPIRED: 'status-expired',
};

function statusCell(c: ChargeView): SafeHtml {
  const words = html`<span class="status ${STATUS_CLASSES[c.status]}">${chargeStatusWords(c)}</span>`;
  return c.status === 'PENDING' && c.pendingReason === 'user_approval' ? html`${words} <a href="/console/approvals">Review</a>` : words;
}

function chargeTable(charges: readonly ChargeView[], session: ConsoleSession): SafeHtml {
  const rows = charges.map((c) => {
    const refunded = String(c.refundedAmount);
    return html`<tr>
<td data-label="Date">${when(c.createdAt, session)}</td>
<td data-label="Agent"><a href="${ACTIVITY}?agent=${c.agent.id}">${agentLabel(c.agent)}</a></td>
<td data-label="Description" class="wrap">${c.description}</td>
<td data-label="Amount" class="num">${money(c.amount, c.currency)}</td>
<td data-label="Status">${statusCell(c)}</td>
<td data-label="Grant" class="${c.grantId ? 'mono' : ''}">${c.grantId ?? html`<span class="muted">account key</span>`}</td>
<td data-label="Refunded" class="num">${Number(refunded) > 0 ? money(refunded, c.currency) : html`<span class="muted">—</span>`}</td>
</tr>`;
  });
  return html`${tableRegion(
    'Charges',
    html`<table>
<thead><tr><th scope="col">Date</th><th scope="col">Agent</th><th scope="col">Description</th><th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col">Grant</th><th scope="col" class="num">Refunded</th></tr></thead>
<tbody>${rows}</tbody>
</table>`,
  )}${zoneNote(session)}`;
}

/** GET /console/activity/csv: the filtered rows (the cursor is ignored: a download starts at the newest). */
const activityCsv: ConsolePage = async (session, req) => {
  let filters: Filters;
  try {
    filters = readFilters(req.query);
  } catch (error) {
    return page('Activity', 'activity', html`${errorBox(refusal(error).message)}<p><a href="${ACTIVITY}">Show all activity</a></p>`, 400);
  }
  const rows: string[][] = [];
  let cursor: string | undefined;
  let cut = false;
  do {
    const list = await chargesPage(session.userId, filters, req.baseUrl, 100, cursor);
    for (const c of list.data) {
      rows.push([c.id, c.createdAt, agentLabel(c.agent), c.description, plainAmount(c.amount), c.currency, c.status]);
    }
    cursor = list.nextCursor ?? undefined;
    if (cursor && rows.length >= CSV_MAX_ROWS) {
      cut = true;
      break;
    }
  } while (cursor);
  const day = req.now.toISOString().slice(0, 10);
  return {
    kind: 'download',
    contentType: 'text/csv; charset=utf-8',
    filename: `activity-${day}${cut ? '-newest-10000' : ''}.csv`,
    body: csvFile(CSV_HEADER, rows),
  };
};

export const ACTIVITY_ROUTES: readonly ConsoleRoute[] = [
  { method: 'GET', path: ACTIVITY, page: activityPage },
  { method: 'GET', path: `${ACTIVITY}/csv`, page: activityCsv },
];
