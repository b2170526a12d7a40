/**
 * How the ledger audit's row parsers read one raw attribute (ledger-rows.mapper.ts): a whole number
 * of minor units, a currency, a set of balances, an id from a key. An attribute that cannot hold
 * money becomes a sentence in `unreadable` naming the item, in the order the parsers met it; each
 * row kind's parser (ledger-rows.*.ts) shares one reader so the sentences keep that order. Pure.
 */
import { CURRENCIES, type Currency, isCurrency, type Minor } from '../../core/money';

export type Item = Record<string, unknown>;

/** An item (or one attribute of it) that holds money but could not be read as a row. */
export interface UnreadableItem {
  /** The agent it belongs to, when known: the audit still counts that agent. */
  agentId?: string;
  problem: string;
}

/** The id after the kind prefix: `CREDITS#u1` → `u1`. */
export const afterHash = (pk: unknown): string => String(pk ?? '').slice(String(pk ?? '').indexOf('#') + 1);
/** Rows written before the id attributes existed carry the id only in the key. */
export const idOr = (value: unknown, fallback: string): string => (typeof value === 'string' ? value : fallback);

/** The checks every row parser reads an item with, and the sentences they left. */
export interface RowReader {
  unreadable: UnreadableItem[];
  note(problem: string, agentId?: string): void;
  /** A whole number of minor units, or a note naming `where`. Absent counts as zero where `allowZero`. */
  minor(value: unknown, where: string, allowZero: boolean, agentId?: string): Minor | undefined;
  currencyOf(item: Item, where: string, agentId?: string): Currency | undefined;
  /** Stored balances may be negative (the audit says so); they must be whole minor units. */
  balancesOf(item: Item, where: string, agentId?: string, attribute?: (c: Currency) => string): Partial<Record<Currency, Minor>>;
}

/** A reader with no sentences yet: one per `toLedgerRows` call. */
export function rowReader(): RowReader {
  const unreadable: UnreadableItem[] = [];
  const note = (problem: string, agentId?: string) => {
    unreadable.push(agentId === undefined ? { problem } : { agentId, problem });
  };
  const minor = (value: unknown, where: string, allowZero: boolean, agentId?: string): Minor | undefined => {
    if (typeof value === 'number' && Number.isSafeInteger(value) && (value > 0 || (allowZero && value === 0))) return value;
    if (value === undefined && allowZero) return 0;
    note(`${where}: ${JSON.stringify(value)} is not a valid amount in minor units`, agentId);
    return undefined;
  };
  const currencyOf = (item: Item, where: string, agentId?: string): Currency | undefined => {
    if (isCurrency(item.currency)) return item.currency;
    note(`${where}: unknown currency ${JSON.stringify(item.currency)}`, agentId);
    return undefined;
  };
  /** Stored balances may be negative (the audit says so); they must be whole minor units. */
  const balancesOf = (
    item: Item,
    where: string,
    agentId?: string,
    attribute = (c: Currency): string => c,
  ): Partial<Record<Currency, Minor>> => {
    const balances: Partial<Record<Currency, Minor>> = {};
    for (const c of CURRENCIES) {
      const value = item[attribute(c)];
      const amount =
        typeof value === 'number' && Number.isSafeInteger(value) ? value : minor(value, `${where} ${attribute(c)}`, true, agentId);
      if (amount !== undefined) balances[c] = amount;
    }
    return balances;
  };
  return { unreadable, note, minor, currencyOf, balancesOf };
}
