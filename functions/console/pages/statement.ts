/**
 * Statement (DESIGN §26): every movement of the payer's balance, newest first — top-ups, charges,
 * holds and their release, refunds, x402 purchases, operator credits, reversals — with its
 * counterparty, its signed amount (`+25.00 USD` a credit, `−4.50 USD` a debit of the available
 * balance) and the balance after it, as a bank statement reads. It is the API's
 * `GET /api/v1/users/me/statement` (its operation, run for the session's payer: the same filters,
 * checks and messages). Filters are query parameters, so a filtered view has a URL; `Next page`
 * follows the API's cursor; `Download CSV` gives every filtered row (up to CSV_MAX_ROWS) with every
 * column, guarded against formula injection (csv.ts). Activity's old URLs redirect here (activity.ts).
 *
 * DESIGN §21's budget (3 DynamoDB requests, the session's read included) is the statement's own
 * page 1: the session, the balance, one Query of the rows. So the page reads nothing beside it that
 * its rows can stand in for: the Agent filter's options are the agents on the page (and the one
 * selected), and the open tabs are read only on the whole statement's first page, and only where
 * its rows cannot rule an open tab out (docs/console.md "What the Statement and Limits pages cost").
 */
import { StoredReply } from '../../contracts/api';
import type { Currency } from '../../core/money';
import { CURRENCIES, parseAmount } from '../../core/money';
import { refundReceiptId } from '../../core/receipts';
import { STATEMENT_TYPES, type StatementType } from '../../core/statement';
import { html, type SafeHtml } from '../../http/html';
import { runFor } from '../../operations/execute';
import { userStatementOperation } from '../../operations/statement';
import { statementView } from '../../use-cases/identity/statement';
import type { ConsolePage, ConsoleRequest, ConsoleRoute, ConsoleSession } from '../page';
import { agentLabel, type KnownAgent } from './agents';
import { payerOf } from './caller';
import { CsvNumber, csvFile } from './csv';
import { type OpenTabs, openTabsSection, readOpenTabs } from './open-tabs';
import { consoleReceiptHref } from './receipts';
import { agentsOnPage, holdsMoney, mayHoldOpenTab, noReceiptYet } from './statement-facts';
import { errorBox, money, page, plainAmount, refusal, tableRegion, when, zoneNote } from './ui';

export const STATEMENT = '/console/statement';
const PAGE_SIZE = 25;
/** A download reads the statement 100 rows a request; past this many rows it stops (and says so in the file name). */
export const STATEMENT_CSV_MAX_ROWS = 10_000;
export const STATEMENT_CSV_HEADER = [
  'id',
  'createdAt',
  'type',
  'counterparty',
  'description',
  'amount',
  'currency',
  'balanceAfter',
  'status',
  'grantId',
  'reference',
] as const;

type Row = ReturnType<typeof statementView>['data'][number];

export const TYPE_LABELS: Readonly<Record<StatementType, string>> = {
  topup: 'Top-up',
  charge: 'Charge',
  hold: 'Hold',
  hold_release: 'Hold released',
  refund: 'Refund',
  x402_purchase: 'x402 purchase',
  credit: 'Credit',
  reversal: 'Top-up reversed',
};

/** The page's query parameters, as the API names them (`agent` is the API's `agentId`, as Activity had it). */
const FILTERS = ['currency', 'type', 'agent', 'from', 'to', 'q'] as const;
type Filters = Partial<Record<(typeof FILTERS)[number] | 'cursor', string>>;

/** The API's field paths, as the filter form labels them. */
const LABELS = { currency: 'Currency', type: 'Type', agentId: 'Agent', from: 'From', to: 'To', q: 'Search', cursor: 'Next page' };

function filtersOf(query: ConsoleRequest['query']): Filters {
  const f: Filters = {};
  for (const name of [...FILTERS, 'cursor'] as const) {
    const value = (query[name] ?? '').trim();
    if (value !== '') f[name] = value;
  }
  return f;
}

/** The API's query of a view. */
const apiQuery = (f: Filters, limit: number, cursor?: string): Record<string, string> => ({
  ...(f.currency ? { currency: f.currency } : {}),
  ...(f.type ? { type: f.type } : {}),
  ...(f.agent ? { agentId: f.agent } : {}),
  ...(f.from ? { from: f.from } : {}),
  ...(f.to ? { to: f.to } : {}),
  ...(f.q ? { q: f.q } : {}),
  limit: String(limit),
  ...(cursor ? { cursor } : {}),
});

/** The query string of a view (without `cursor` unless given). */
export function statementQuery(f: Filters, extra: { cursor?: string } = {}): string {
  const params = new URLSearchParams();
  for (const name of FILTERS) if (f[name]) params.set(name, f[name] ?? '');
  if (extra.cursor) params.set('cursor', extra.cursor);
  const text = params.toString();
  return text ? `?${text}` : '';
}

async function statementPage(session: ConsoleSession, f: Filters, limit: number, cursor?: string) {
  const read = await runFor(userStatementOperation, payerOf(session), { query: apiQuery(f, limit, cursor) });
  // A read takes no Idempotency-Key: never a stored reply.
  if (read instanceof StoredReply) throw new Error('a statement read answered a stored reply');
  return statementView(read);
}

/** An amount with its sign, as a statement reads: `+25.00 USD`, `−4.50 USD` (a true minus sign). */
export function signedMoney(amount: { toString(): string }, currency: Currency | string): string {
  const text = String(amount);
  const negative = text.startsWith('-');
  return `${negative ? '\u2212' : '+'}${money(negative ? text.slice(1) : text, currency)}`;
}

const statementPageHandler: ConsolePage = async (session, req) => {
  const filters = filtersOf(req.query);
  let list: Awaited<ReturnType<typeof statementPage>>;
  try {
    list = await statementPage(session, filters, PAGE_SIZE, filters.cursor);
  } catch (error) {
    // A filter the API refuses (a date that is none, an agent id that is none), or a cursor not
    // of this view: 400 with the form again, the values kept.
    const { status, message } = refusal(error, LABELS);
    return page(
      'Statement',
      'statement',
      html`${errorBox(message)}${filterForm(filters, [], true)}<p><a href="${STATEMENT}">Show the whole statement</a></p>`,
      status,
    );
  }
  const filtered = FILTERS.some((name) => filters[name] !== undefined);
  // A payer whose balance never moved gets the next step, not filters over nothing.
  if (list.data.length === 0 && !filtered && !filters.cursor && list.nextCursor === null) {
    return page('Statement', 'statement', emptyState(filters, false, false));
  }
  // The open tabs head the whole statement (not a filtered view of it, nor an older page).
  const first = !filtered && !filters.cursor;
  const tabs = first && mayHoldOpenTab(list, req.now) ? await readOpenTabs(session) : undefined;
  const body = html`
<p>Every movement of your balance, newest first, with the balance after it in its currency. A hold is money set aside from your available balance for a charge that is not final yet; its release gives it back.</p>
${tabs ? openTabsSection(tabs, session) : html``}
${filterForm(filters, agentsOnPage(list.data, tabs), false)}
<p class="actions"><a class="button" href="${STATEMENT}/csv${statementQuery(filters)}" download>Download CSV</a></p>
${list.data.length === 0 ? emptyState(filters, filtered, list.nextCursor !== null) : statementTable(list.data, session, noReceiptYet(list.data, tabs))}
<nav class="pager" aria-label="Pages of the statement">
${filters.cursor ? html`<a href="${STATEMENT}${statementQuery(filters)}">Newest</a>` : html``}
${list.nextCursor ? html`<a href="${STATEMENT}${statementQuery(filters, { cursor: list.nextCursor })}" rel="next">Next page</a>` : html``}
</nav>`;
  return page('Statement', 'statement', body);
};

function emptyState(f: Filters, filtered: boolean, more: boolean): SafeHtml {
  if (more)
    return html`<p class="empty">Nothing matches in this part of your statement. Use <strong>Next page</strong> to look further back.</p>`;
  if (filtered) return html`<p class="empty">Nothing matches these filters. <a href="${STATEMENT}">Show the whole statement</a>.</p>`;
  if (f.cursor) return html`<p class="empty">That was the start of your statement.</p>`;
  return html`<div class="empty"><p>Nothing has moved your balance yet. Add funds first; then give an agent a grant, and what it charges shows here with your balance after each charge.</p>
<p class="actions"><a class="button primary" href="/console/funds">Add funds</a><a class="button" href="/console/grants">Give a grant</a></p></div>`;
}

function filterForm(f: Filters, agents: readonly KnownAgent[], invalid: boolean): SafeHtml {
  const option = (value: string, label: string, selected: boolean) =>
    html`<option value="${value}"${selected ? html` selected` : html``}>${label}</option>`;
  const agentOptions = [...agents];
  if (f.agent && !agents.some((a) => a.id === f.agent)) agentOptions.push({ id: f.agent, name: undefined, currencies: [] });
  const aria = invalid ? html` aria-invalid="true"` : html``;
  return html`
<form class="filters statement-filters" method="get" action="${STATEMENT}" aria-label="Filter the statement">
<div class="field"><label for="s-currency">Currency</label>
<select id="s-currency" name="currency">${option('', 'All currencies', !f.currency)}${CURRENCIES.map((c) => option(c, c, f.currency === c))}</select></div>
<div class="field"><label for="s-type">Type</label>
<select id="s-type" name="type">${option('', 'All types', !f.type)}${STATEMENT_TYPES.map((t) => option(t, TYPE_LABELS[t], f.type === t))}</select></div>
<div class="field"><label for="s-agent">Agent</label>
<select id="s-agent" name="agent">${option('', 'All agents', !f.agent)}${agentOptions.map((a) => option(a.id, agentLabel(a), f.agent === a.id))}</select></div>
<div class="field"><label for="s-from">From</label>
<input id="s-from" name="from" type="date" value="${f.from ?? ''}" aria-describedby="s-hint"${aria}></div>
<div class="field"><label for="s-to">To</label>
<input id="s-to" name="to" type="date" value="${f.to ?? ''}" aria-describedby="s-hint"${aria}></div>
<div class="field"><label for="s-q">Search</label>
<input id="s-q" name="q" type="search" maxlength="100" value="${f.q ?? ''}" autocomplete="off" aria-describedby="s-hint"></div>
<p class="hint" id="s-hint">From and To are whole days in UTC, both included. Search looks for the words in descriptions.</p>
<button type="submit">Apply filters</button>
</form>`;
}

/** Who is on the other side, as a person reads it: the agent's name, the seller's host, the rail. */
function counterpartyOf(row: Row): SafeHtml {
  const { kind, name, id } = row.counterparty;
  switch (kind) {
    case 'agent':
      return html`<a href="${STATEMENT}?agent=${id}">${name || id}</a>`;
    case 'seller':
      return html`<span class="wrap">${name || id}</span> <span class="muted">(seller)</span>`;
    case 'rail':
      return html`${name || id}`;
    default:
      return html`${name || 'The operator'}`;
  }
}

/**
 * The row's receipt (DESIGN §27), where its movement settles into one: a charge, a purchase, a
 * top-up, a refund (named after its charge); a hold's is its capture's, once captured (until then
 * the receipt page says there is none yet). A hold given back, the operator's credit and a reversal
 * are no payment between two parties: no receipt. A hold the page knows has none (`noReceiptYet`:
 * given back whole, or an open tab's) shows `—` as they do, rather than a link to "no receipt".
 */
function receiptLink(r: Row, none: ReadonlySet<string>): SafeHtml {
  const id = holdsMoney(r) && none.has(r.reference) ? undefined : RECEIPT_OF[r.type]?.(r.reference);
  if (!id) return html`<span class="muted">—</span>`;
  return html`<a href="${consoleReceiptHref(id)}">Receipt<span class="visually-hidden"> of ${TYPE_LABELS[r.type]} ${r.reference}</span></a>`;
}

const RECEIPT_OF: Partial<Record<StatementType, (reference: string) => string>> = {
  charge: (reference) => reference,
  hold: (reference) => reference,
  x402_purchase: (reference) => reference,
  topup: (reference) => reference,
  refund: (reference) => refundReceiptId(reference),
};

function statementTable(rows: readonly Row[], session: ConsoleSession, none: ReadonlySet<string>): SafeHtml {
  const body = rows.map((r) => {
    const negative = String(r.amount).startsWith('-');
    return html`<tr>
<td data-label="Date" class="nowrap">${when(r.createdAt, session)}</td>
<td data-label="Type" class="nowrap">${TYPE_LABELS[r.type]}</td>
<td data-label="Counterparty">${counterpartyOf(r)}</td>
<td data-label="Description" class="wrap">${r.description || html`<span class="muted">—</span>`}</td>
<td data-label="Amount" class="num"><span class="${negative ? 'debit' : 'credit'}">${signedMoney(r.amount, r.currency)}</span></td>
<td data-label="Balance after" class="num">${money(r.balanceAfter, r.currency)}</td>
<td data-label="Receipt">${receiptLink(r, none)}</td>
</tr>`;
  });
  return html`${tableRegion(
    'Statement',
    html`<table class="statement">
<thead><tr><th scope="col">Date</th><th scope="col">Type</th><th scope="col">Counterparty</th><th scope="col">Description</th><th scope="col" class="num">Amount</th><th scope="col" class="num">Balance after</th><th scope="col">Receipt</th></tr></thead>
<tbody>${body}</tbody>
</table>`,
  )}${zoneNote(session)}`;
}

/** A row as the CSV has it: every column, amounts as plain signed decimals (numbers, not text). */
function csvRow(r: Row): (string | CsvNumber)[] {
  return [
    r.id,
    r.createdAt,
    r.type,
    r.counterparty.name || r.counterparty.id,
    r.description,
    new CsvNumber(plainAmount(r.amount)),
    r.currency,
    new CsvNumber(plainAmount(r.balanceAfter)),
    r.status,
    r.grantId ?? '',
    r.reference,
  ];
}

/** GET /console/statement/csv: the filtered rows (the cursor is ignored: a download starts at the newest). */
const statementCsv: ConsolePage = async (session, req) => {
  const filters = filtersOf(req.query);
  const rows: (string | CsvNumber)[][] = [];
  let cursor: string | undefined;
  let cut = false;
  try {
    do {
      const list = await statementPage(session, filters, 100, cursor);
      for (const r of list.data) rows.push(csvRow(r));
      cursor = list.nextCursor ?? undefined;
      if (cursor && rows.length >= STATEMENT_CSV_MAX_ROWS) {
        cut = true;
        break;
      }
    } while (cursor);
  } catch (error) {
    const { status, message } = refusal(error, LABELS);
    return page('Statement', 'statement', html`${errorBox(message)}<p><a href="${STATEMENT}">Show the whole statement</a></p>`, status);
  }
  const day = req.now.toISOString().slice(0, 10);
  return {
    kind: 'download',
    contentType: 'text/csv; charset=utf-8',
    filename: `statement-${day}${cut ? '-newest-10000' : ''}.csv`,
    body: csvFile(STATEMENT_CSV_HEADER, rows),
  };
};

export const STATEMENT_ROUTES: readonly ConsoleRoute[] = [
  { method: 'GET', path: STATEMENT, page: statementPageHandler },
  { method: 'GET', path: `${STATEMENT}/csv`, page: statementCsv },
];
