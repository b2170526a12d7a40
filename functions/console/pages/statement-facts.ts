/**
 * What the console's Statement page knows from the rows it has read, without a read of its own
 * (DESIGN §21's 3 requests; docs/console.md "What the Statement and Limits pages cost"): whether a
 * tab may still be open (so whether to read the open tabs), which `hold` rows have no receipt, and
 * the Agent filter's options.
 */
import { MAX_APPROVAL_WINDOW_SECONDS } from '../../contracts/request.schemas';
import { MAX_TAB_TTL_SECONDS } from '../../contracts/tab.schemas';
import type { Currency } from '../../core/money';
import { parseAmount } from '../../core/money';
import type { statementView } from '../../use-cases/identity/statement';
import { agentLabel, type KnownAgent } from './agents';
import type { OpenTabs } from './open-tabs';

type Row = ReturnType<typeof statementView>['data'][number];

/** A row's amount in minor units, without its sign (exact: the API's amounts are decimal literals). */
const minorOf = (r: Row): number => parseAmount(String(r.amount).replace(/^-/, '') || '0', r.currency as Currency, Number.MAX_SAFE_INTEGER);

/** What the `hold_release` rows of the page gave back, by the hold's reference. */
function releasedOnPage(rows: readonly Row[]): Map<string, number> {
  const released = new Map<string, number>();
  for (const r of rows)
    if (r.type === 'hold_release' && String(r.amount) !== '0') released.set(r.reference, (released.get(r.reference) ?? 0) + minorOf(r));
  return released;
}

/**
 * How old a tab's hold can be while the tab is open: its approval waits at most 7 days (a policy's
 * `approvalWindowSeconds` is at most 604800) and it is open for at most a day from then (a tab's
 * `ttlSeconds` is at most 86400); a day more for the sweeper that closes it at its `expiresAt`.
 */
export const TAB_HOLD_MAX_AGE_MS = (MAX_APPROVAL_WINDOW_SECONDS + MAX_TAB_TTL_SECONDS + 86_400) * 1000;

/**
 * Whether a tab may be open, as the whole statement's first page knows it. A tab's hold is a `hold`
 * row written when the tab opened, and a hold's settlement is its only one: a `hold_release` of its
 * reference (newer, so on this page too) says it is settled and its tab closed. So no tab is open
 * when every hold on the page is released (or there is none) and the page reaches back past the
 * oldest hold an open tab can have (or there is no page after it): the open tabs are not read.
 * Otherwise one may be (a hold captured whole writes no row, so an unreleased hold may be a closed
 * tab as well as an open one): read them. The Overview reasons the same way (a tab is short-lived).
 */
export function mayHoldOpenTab(list: { data: readonly Row[]; nextCursor: string | null }, now: Date): boolean {
  const released = releasedOnPage(list.data);
  if (list.data.some((r) => r.type === 'hold' && !released.has(r.reference))) return true;
  if (list.nextCursor === null) return false;
  const oldest = list.data.at(-1)?.createdAt;
  return oldest === undefined || Date.parse(oldest) > now.getTime() - TAB_HOLD_MAX_AGE_MS;
}

/**
 * The rows that hold money (`hold`, `x402_purchase`: a purchase is a hold until the chain settles
 * it) the page knows have no receipt: one its `hold_release` rows on this page gave back whole (a
 * release, a decline, an expiry, a purchase the chain never took: nothing was captured), and the
 * hold of a tab still open (its capture comes when it closes). One released in part was captured
 * in part: its receipt is the capture's, linked. What the page cannot know (a release on a newer
 * page, a hold still pending) keeps its link: the receipt page says when there is none yet.
 */
/** A row whose money is held until it settles: a hold, or an x402 purchase's hold. */
export const holdsMoney = (r: Pick<Row, 'type'>): boolean => r.type === 'hold' || r.type === 'x402_purchase';

export function noReceiptYet(rows: readonly Row[], tabs?: OpenTabs): ReadonlySet<string> {
  const released = releasedOnPage(rows);
  const none = new Set<string>(tabs?.tabs.map((t) => t.chargeId) ?? []);
  for (const r of rows) {
    const back = released.get(r.reference);
    if (holdsMoney(r) && back !== undefined && back >= minorOf(r)) none.add(r.reference);
  }
  return none;
}

/**
 * The Agent filter's options: the agents of the rows on the page and of the open tabs read, by
 * name — no read of their own (DESIGN §21's budget). The agent filtered by stays an option, named
 * when the page names it. Any other agent is one click away: its name on any row links its filter.
 */
export function agentsOnPage(rows: readonly Row[], tabs?: OpenTabs): KnownAgent[] {
  const byId = new Map<string, KnownAgent>();
  const add = (id: string, name: string | null | undefined) => {
    const known = byId.get(id) ?? { id, name: undefined, currencies: [] };
    if (name && !known.name) known.name = name;
    byId.set(id, known);
  };
  for (const r of rows) if (r.counterparty.kind === 'agent') add(r.counterparty.id, r.counterparty.name);
  for (const t of tabs?.tabs ?? []) add(t.agentId, t.agentName);
  return [...byId.values()].sort((a, b) => agentLabel(a).localeCompare(agentLabel(b)));
}
