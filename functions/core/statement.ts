/**
 * The payer's statement (DESIGN §26, docs/statement.md): one entry per movement of the payer's
 * available balance, written in the movement's own transaction, so the entries of a payer whose
 * entries start at creation sum to the balance exactly, whatever ran at once. What an entry holds
 * and how a page's `balanceAfter` is computed backward from the balance are pure, here.
 */
import type { Charge } from './charges';
import type { Currency, Minor } from './money';

/** What moved the balance. A debit of the available balance is negative, a credit positive. */
export const STATEMENT_TYPES = ['topup', 'charge', 'hold', 'hold_release', 'refund', 'x402_purchase', 'credit', 'reversal'] as const;
export type StatementType = (typeof STATEMENT_TYPES)[number];

/** Who is on the other side: an agent, an x402 seller (its host), a top-up rail, the operator. */
export type CounterpartyKind = 'agent' | 'seller' | 'rail' | 'operator';

export interface Counterparty {
  kind: CounterpartyKind;
  id: string;
  /** Stored at write time, so a page is read with no look-up per row. */
  name: string;
}

/** One movement of a payer's balance, as stored (amount signed, integer minor units). */
export interface StatementEntry {
  /** The sort key: a lower-case ULID made with the movement (time order). */
  entryId: string;
  userId: string;
  createdAt: string;
  type: StatementType;
  amount: Minor;
  currency: Currency;
  /** The referenced record's status right after the movement (a charge's `SUCCESS`, a hold's `PENDING`, …). */
  status: string;
  description: string;
  counterparty: Counterparty;
  /** The charge, purchase, top-up, credit or reversal this movement belongs to. */
  reference: string;
  agentId?: string;
  grantId?: string;
}

/** The public id of an entry: `st` + its ULID. */
export const statementEntryId = (entryId: string): string => `st${entryId}`;

/** Running balances per currency: the balance after the next row to be read. */
export type Running = Record<Currency, Minor>;

/** What a page keeps of the rows it reads: each read row, its balance after it, and whether it is shown. */
export interface WalkedRow {
  entry: StatementEntry;
  balanceAfter: Minor;
}

/**
 * Walks rows newest first from `running` (the balance after the newest of them): each row's
 * balance after it is the running balance of its currency, and the running balance before it is
 * that minus its amount. Mutates `running` to the balance before the oldest row walked.
 */
export function walkBackward(rows: readonly StatementEntry[], running: Running): WalkedRow[] {
  return rows.map((entry) => {
    const balanceAfter = running[entry.currency];
    running[entry.currency] = balanceAfter - entry.amount;
    return { entry, balanceAfter };
  });
}

/** The filters a statement page applies to rows after reading them (skipped rows still move the balance). */
export interface StatementFilter {
  currency?: Currency;
  type?: StatementType;
  agentId?: string;
  /** Case-insensitive text in the description. */
  q?: string;
  /** ISO instants, inclusive: `from` ≤ createdAt ≤ `to`. */
  from?: string;
  to?: string;
}

/** Whether a row passes the page's filters (the date bounds included). */
export function matches(entry: StatementEntry, filter: StatementFilter): boolean {
  if (filter.currency && entry.currency !== filter.currency) return false;
  if (filter.type && entry.type !== filter.type) return false;
  if (filter.agentId && entry.agentId !== filter.agentId) return false;
  if (filter.q && !entry.description.toLowerCase().includes(filter.q.toLowerCase())) return false;
  if (filter.from && entry.createdAt < filter.from) return false;
  if (filter.to && entry.createdAt > filter.to) return false;
  return true;
}

/** Whether a filter skips anything but by the date bounds (then a page may read past `limit` rows). */
export const filtersRows = (filter: StatementFilter): boolean =>
  filter.currency !== undefined || filter.type !== undefined || filter.agentId !== undefined || filter.q !== undefined;

/** The seller of an x402 purchase's hold, as its statement rows name it: its resource's host, and the address paid. */
export function sellerOf(charge: Pick<Charge, 'purchase'>): Counterparty | undefined {
  const terms = charge.purchase;
  if (!terms) return undefined;
  const payTo = String(terms.requirements.payTo ?? '');
  let host: string | undefined;
  try {
    host = terms.resource?.url ? new URL(terms.resource.url).host : undefined;
  } catch {
    host = undefined;
  }
  return { kind: 'seller', id: payTo, name: host ?? payTo };
}
