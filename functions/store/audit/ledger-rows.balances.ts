/**
 * The ledger audit's rows of balances (ledger-rows.mapper.ts): payers' balances with their held and
 * owed money, agents' earned-balance shards, and what moved a payer's balance from outside — admin
 * top-ups in, reversed top-ups out. Pure.
 */
import type { Currency, Minor } from '../../core/money';
import { heldAttribute } from '../charges/payer';
import { owedAttribute } from '../topups/owed';
import { afterHash, type Item, idOr, type RowReader } from './ledger-rows.reader';

/**
 * A user's stored balances and held money (`USER#…/USER`, attributes `USD`, `USDC`, `heldUSD`,
 * `heldUSDC`; store/charges/payer.ts `heldAttribute`). An amount that is not an integer is left out and
 * reported; an absent one is zero.
 */
export interface UserRow {
  kind: 'user';
  userId: string;
  balances: Partial<Record<Currency, Minor>>;
  /** Money moved from the balance into PENDING charges, per currency. */
  held: Partial<Record<Currency, Minor>>;
  /** What the payer owes after reversed top-ups (`owed<currency>`, store/topups/owed.ts). */
  owed?: Partial<Record<Currency, Minor>>;
  /** Created since the statement (`statementFrom`): every movement of the balance has its entry (docs/statement.md). */
  statementFrom?: true;
}

/** A statement entry (`STMT#<userId>/<ulid>`): one movement of the payer's balance, signed. */
export interface StatementRow {
  kind: 'statement';
  userId: string;
  entryId: string;
  currency: Currency;
  amount: Minor;
}

/** One write shard of an agent's earned balance (`AGENTBAL#<agentId>#<n>/BAL`). */
export interface ShardRow {
  kind: 'shard';
  agentId: string;
  /** The stored partition key, so a finding names the exact item to look at. */
  key: string;
  balances: Partial<Record<Currency, Minor>>;
}

/** An admin top-up (`CREDITS#<userId>/<id>`): money in. */
export interface CreditRow {
  kind: 'credit';
  userId: string;
  creditId: string;
  currency: Currency;
  amount: Minor;
  /** The part of a top-up's credit that paid what the payer owed: money out with a reversal. */
  owedRepaid?: Minor;
}

/** A reversed top-up (`REVERSALS#<userId>/<refundId>`): `debited` left the balance, `owed` is the shortfall. */
export interface ReversalRow {
  kind: 'reversal';
  userId: string;
  reversalId: string;
  currency: Currency;
  amount: Minor;
  debited: Minor;
  owed: Minor;
}

/** An admin top-up each (money in). */
export function creditRows(items: readonly Item[], reader: RowReader): CreditRow[] {
  const { minor, currencyOf } = reader;
  const credits: CreditRow[] = [];
  for (const item of items) {
    const where = `credit ${String(item.PK)}/${String(item.SK)}`;
    const currency = currencyOf(item, where);
    const amount = minor(item.amount, where, false);
    const owedRepaid = minor(item.owedRepaid, `${where} owedRepaid`, true);
    if (!currency || amount === undefined || owedRepaid === undefined) continue;
    credits.push({
      kind: 'credit',
      userId: idOr(item.userId, afterHash(item.PK)),
      creditId: String(item.SK),
      currency,
      amount,
      ...(owedRepaid > 0 ? { owedRepaid } : {}),
    });
  }
  return credits;
}

/** A reversed top-up each. */
export function reversalRows(items: readonly Item[], reader: RowReader): ReversalRow[] {
  const { minor, currencyOf } = reader;
  const reversals: ReversalRow[] = [];
  for (const item of items) {
    const where = `reversal ${String(item.PK)}/${String(item.SK)}`;
    const currency = currencyOf(item, where);
    const amount = minor(item.amount, `${where} amount`, false);
    const debited = minor(item.debited, `${where} debited`, true);
    const owed = minor(item.owed, `${where} owed`, true);
    if (!currency || amount === undefined || debited === undefined || owed === undefined) continue;
    reversals.push({
      kind: 'reversal',
      userId: idOr(item.userId, afterHash(item.PK)),
      reversalId: String(item.SK),
      currency,
      amount,
      debited,
      owed,
    });
  }
  return reversals;
}

/** A payer's balances, held and owed money each. */
export function userRows(items: readonly Item[], reader: RowReader): UserRow[] {
  const { balancesOf } = reader;
  const users: UserRow[] = items.map((item) => {
    const userId = idOr(item.userId, afterHash(item.PK));
    const owed = balancesOf(item, `user ${userId}`, undefined, owedAttribute);
    return {
      kind: 'user',
      userId,
      balances: balancesOf(item, `user ${userId}`),
      held: balancesOf(item, `user ${userId}`, undefined, heldAttribute),
      // Only payers who ever owed carry it (the rows of everyone else stay as they were).
      ...(Object.values(owed).some((v) => v !== 0) ? { owed } : {}),
      ...(typeof item.statementFrom === 'string' ? { statementFrom: true as const } : {}),
    };
  });
  return users;
}

/** One write shard of an agent's earned balance each. */
export function shardRows(items: readonly Item[], reader: RowReader): ShardRow[] {
  const { balancesOf } = reader;
  const shards: ShardRow[] = items.map((item) => {
    const key = String(item.PK);
    // AGENTBAL#<agentId>#<shard>
    const agentId = idOr(item.agentId, key.split('#')[1] ?? key);
    return { kind: 'shard', agentId, key, balances: balancesOf(item, `shard ${key}`, agentId) };
  });
  return shards;
}

/** A statement entry each; its amount is signed (a debit negative, a reversal of nothing 0). */
export function statementRows(items: readonly Item[], reader: RowReader): StatementRow[] {
  const { note, currencyOf } = reader;
  const rows: StatementRow[] = [];
  for (const item of items) {
    const where = `statement entry ${String(item.PK)}/${String(item.SK)}`;
    const currency = currencyOf(item, where);
    if (typeof item.amount !== 'number' || !Number.isSafeInteger(item.amount)) {
      note(`${where}: ${JSON.stringify(item.amount)} is not a valid amount in minor units`);
      continue;
    }
    if (!currency) continue;
    rows.push({
      kind: 'statement',
      userId: idOr(item.userId, afterHash(item.PK)),
      entryId: String(item.SK),
      currency,
      amount: item.amount,
    });
  }
  return rows;
}
