/**
 * The ledger audit's checks of each holder's balance (ledger-checks.ts has the whole and `Rows`):
 * an agent's shards against its charges and payouts, a payer's balance against credits, charges and
 * reversals, a payer's held money against their open holds, their debt against its records, and
 * no balance below zero. Pure; each returns the mismatches or one sentence per break.
 */
import { CURRENCIES, type Currency, formatAmount, type Minor } from '../core/money';
import type { Rows } from './ledger-checks';

export interface AgentMismatch {
  agentId: string;
  currency: Currency;
  successCharges: Minor;
  shardBalance: Minor;
  payoutsGross: Minor;
  /** successCharges − (shardBalance + payoutsGross). */
  difference: Minor;
}

export interface UserMismatch {
  userId: string;
  currency: Currency;
  credited: Minor;
  charged: Minor;
  balance: Minor;
  /** Taken back by reversals: debited from the balance, or paid of a debt by a later credit. */
  reversed?: Minor;
  /** credited − charged − reversed − balance. */
  difference: Minor;
}

/** A payer's debt on their item against what the reversal and credit records say it is. */
export interface OwedMismatch {
  userId: string;
  currency: Currency;
  /** `owed<currency>` on the user's item. */
  owedOnItem: Minor;
  /** Σ reversals' `owed` − Σ credits' `owedRepaid`. */
  owedByRecords: Minor;
}

export interface HeldMismatch {
  userId: string;
  currency: Currency;
  /** `held<currency>` on the user's item. */
  heldOnItem: Minor;
  /** The sum of this user's PENDING charges in that currency. */
  pendingCharges: Minor;
  /** heldOnItem − pendingCharges. */
  difference: Minor;
}
const zero = (): Record<Currency, Minor> => ({ USD: 0, USDC: 0 });

/** A nested per-id, per-currency accumulator. */
class Sums {
  private readonly byId = new Map<string, Record<Currency, Minor>>();
  add(id: string, currency: Currency, amount: Minor): void {
    let row = this.byId.get(id);
    if (!row) {
      row = zero();
      this.byId.set(id, row);
    }
    row[currency] += amount;
  }
  get(id: string, currency: Currency): Minor {
    return this.byId.get(id)?.[currency] ?? 0;
  }
}
/** Every agent that holds or moved money (shards, charges, payouts), sorted. */
export function agentIdsOf(rows: Pick<Rows, 'shards' | 'charges' | 'payouts' | 'x402Payments'>): string[] {
  return [...new Set([...rows.shards, ...rows.charges, ...rows.payouts, ...(rows.x402Payments ?? [])].map((r) => r.agentId))].sort();
}

/**
 * Per agent and currency: what it earned (SUCCESS charges) = what it holds (its shards) + what
 * left it (gross of its payouts that were not refunded). `agentIds` defaults to every agent seen.
 */
export function agentMismatches(
  rows: Pick<Rows, 'shards' | 'charges' | 'payouts' | 'x402Payments'>,
  agentIds = agentIdsOf(rows),
): AgentMismatch[] {
  const earned = new Sums();
  const held = new Sums();
  const paidOut = new Sums();
  // What a charge earned is what it captured less what its refunds gave back.
  // A purchase paid a seller, not its agent (DESIGN §22).
  for (const charge of rows.charges) {
    if (charge.status === 'SUCCESS' && !charge.purchase) earned.add(charge.agentId, charge.currency, charge.amount - charge.refundedAmount);
  }
  // x402 payments are earnings too (counted with the charges' figure).
  for (const payment of rows.x402Payments ?? []) earned.add(payment.agentId, 'USDC', payment.amount);
  for (const shard of rows.shards) for (const c of CURRENCIES) held.add(shard.agentId, c, shard.balances[c] ?? 0);
  for (const payout of rows.payouts) if (payout.status !== 'FAILED') paidOut.add(payout.agentId, payout.currency, payout.amount);
  const mismatches: AgentMismatch[] = [];
  for (const agentId of agentIds) {
    for (const currency of CURRENCIES) {
      const successCharges = earned.get(agentId, currency);
      const shardBalance = held.get(agentId, currency);
      const payoutsGross = paidOut.get(agentId, currency);
      const difference = successCharges - shardBalance - payoutsGross;
      if (difference !== 0) mismatches.push({ agentId, currency, successCharges, shardBalance, payoutsGross, difference });
    }
  }
  return mismatches;
}

export function describeAgentMismatch(m: AgentMismatch): string {
  const f = (minor: Minor) => formatAmount(minor, m.currency);
  return (
    `agent ${m.agentId} ${m.currency}: SUCCESS charges ${f(m.successCharges)} ≠ shard balances ${f(m.shardBalance)} + payouts gross ` +
    `${f(m.payoutsGross)} — difference ${f(m.difference)}`
  );
}

/**
 * Per user and currency: credits − charges that took money (SUCCESS and PENDING) − what
 * reversals took back (debited, and debts paid by later credits) = the user's balance.
 */
export function userMismatches(rows: Pick<Rows, 'users' | 'credits' | 'charges' | 'reversals'>): UserMismatch[] {
  const credited = new Sums();
  const charged = new Sums();
  const balance = new Sums();
  const reversed = new Sums();
  const userIds = new Set<string>();
  for (const credit of rows.credits) {
    credited.add(credit.userId, credit.currency, credit.amount);
    reversed.add(credit.userId, credit.currency, credit.owedRepaid ?? 0);
    userIds.add(credit.userId);
  }
  for (const reversal of rows.reversals ?? []) {
    reversed.add(reversal.userId, reversal.currency, reversal.debited);
    userIds.add(reversal.userId);
  }
  for (const charge of rows.charges) {
    if (charge.status !== 'SUCCESS' && charge.status !== 'PENDING') continue;
    charged.add(charge.userId, charge.currency, charge.amount - charge.refundedAmount);
    userIds.add(charge.userId);
  }
  for (const user of rows.users) {
    for (const c of CURRENCIES) balance.add(user.userId, c, user.balances[c] ?? 0);
    userIds.add(user.userId);
  }
  const mismatches: UserMismatch[] = [];
  for (const userId of [...userIds].sort()) {
    for (const currency of CURRENCIES) {
      const m = {
        credited: credited.get(userId, currency),
        charged: charged.get(userId, currency),
        balance: balance.get(userId, currency),
      };
      const taken = reversed.get(userId, currency);
      const difference = m.credited - m.charged - taken - m.balance;
      if (difference !== 0) mismatches.push({ userId, currency, ...m, ...(taken ? { reversed: taken } : {}), difference });
    }
  }
  return mismatches;
}

/**
 * Per user and currency: the held money on the user's item = the sum of that user's PENDING
 * charges. Every user seen, on an item or in a PENDING charge (a PENDING charge of a user with no
 * item is held money nobody can give back).
 */
export function heldMismatches(rows: Pick<Rows, 'users' | 'charges'>): HeldMismatch[] {
  const onItem = new Sums();
  const pending = new Sums();
  const userIds = new Set<string>();
  for (const user of rows.users) {
    for (const c of CURRENCIES) onItem.add(user.userId, c, user.held[c] ?? 0);
    userIds.add(user.userId);
  }
  for (const charge of rows.charges) {
    if (charge.status !== 'PENDING') continue;
    pending.add(charge.userId, charge.currency, charge.amount);
    userIds.add(charge.userId);
  }
  const mismatches: HeldMismatch[] = [];
  for (const userId of [...userIds].sort()) {
    for (const currency of CURRENCIES) {
      const heldOnItem = onItem.get(userId, currency);
      const pendingCharges = pending.get(userId, currency);
      if (heldOnItem !== pendingCharges) {
        mismatches.push({ userId, currency, heldOnItem, pendingCharges, difference: heldOnItem - pendingCharges });
      }
    }
  }
  return mismatches;
}

export function describeHeldMismatch(m: HeldMismatch): string {
  const f = (minor: Minor) => formatAmount(minor, m.currency);
  return (
    `user ${m.userId} ${m.currency}: held ${f(m.heldOnItem)} on the user item ≠ PENDING charges ${f(m.pendingCharges)} ` +
    `— difference ${f(m.difference)}`
  );
}

export function describeUserMismatch(m: UserMismatch): string {
  const f = (minor: Minor) => formatAmount(minor, m.currency);
  const reversed = m.reversed ? ` − reversed ${f(m.reversed)}` : '';
  return `user ${m.userId} ${m.currency}: credits ${f(m.credited)} − charges ${f(m.charged)}${reversed} ≠ balance ${f(m.balance)} — difference ${f(m.difference)}`;
}

/**
 * Per user and currency: the debt on the user's item (`owed<currency>`) = what reversals left
 * owing − what later top-ups paid of it; and every reversal split its amount into debited + owed.
 */
export function owedProblems(rows: Pick<Rows, 'users' | 'credits' | 'reversals'>): string[] {
  const problems: string[] = [];
  const onItem = new Sums();
  const byRecords = new Sums();
  const userIds = new Set<string>();
  for (const user of rows.users) {
    for (const c of CURRENCIES) onItem.add(user.userId, c, user.owed?.[c] ?? 0);
    userIds.add(user.userId);
  }
  for (const reversal of rows.reversals ?? []) {
    byRecords.add(reversal.userId, reversal.currency, reversal.owed);
    userIds.add(reversal.userId);
    if (reversal.debited + reversal.owed !== reversal.amount) {
      const f = (m: Minor) => formatAmount(m, reversal.currency);
      problems.push(
        `reversal ${reversal.reversalId} of ${f(reversal.amount)} ${reversal.currency} split into debited ${f(reversal.debited)} + owed ${f(reversal.owed)}`,
      );
    }
  }
  for (const credit of rows.credits) {
    if (!credit.owedRepaid) continue;
    byRecords.add(credit.userId, credit.currency, -credit.owedRepaid);
    userIds.add(credit.userId);
  }
  for (const userId of [...userIds].sort()) {
    for (const currency of CURRENCIES) {
      const item = onItem.get(userId, currency);
      const records = byRecords.get(userId, currency);
      const f = (m: Minor) => formatAmount(m, currency);
      if (item !== records) {
        problems.push(`user ${userId} ${currency}: owes ${f(item)} on the user item ≠ reversals less repayments ${f(records)}`);
      }
      if (item < 0) problems.push(`user ${userId}: ${currency} owed is negative (${item})`);
    }
  }
  return problems;
}

/** No stored balance, of a user or of an agent's shard, and no user's held money is below zero. */
export function negativeBalanceProblems(rows: Pick<Rows, 'users' | 'shards'>): string[] {
  const problems: string[] = [];
  for (const row of [...rows.users, ...rows.shards]) {
    const who = row.kind === 'user' ? `user ${row.userId}` : `agent ${row.agentId} shard ${row.key}`;
    for (const c of CURRENCIES) {
      const value = row.balances[c] ?? 0;
      if (value < 0) problems.push(`${who}: ${c} balance is negative (${value})`);
    }
    if (row.kind !== 'user') continue;
    for (const c of CURRENCIES) {
      const value = row.held[c] ?? 0;
      if (value < 0) problems.push(`${who}: ${c} held is negative (${value})`);
    }
  }
  return problems;
}

/**
 * Per payer created since the statement (`statementFrom`) and currency: their statement entries sum
 * to their balance (docs/statement.md). Each entry is written in its movement's own transaction, so
 * a difference is a movement that wrote none, or an entry with no movement. Payers from before the
 * statement are not checked: their older movements have no entries (the opening balance).
 */
export function statementProblems(rows: Pick<Rows, 'users' | 'statements'>): string[] {
  const sums = new Sums();
  for (const entry of rows.statements ?? []) sums.add(entry.userId, entry.currency, entry.amount);
  const problems: string[] = [];
  for (const user of rows.users) {
    if (!user.statementFrom) continue;
    for (const c of CURRENCIES) {
      const balance = user.balances[c] ?? 0;
      const entries = sums.get(user.userId, c);
      if (entries !== balance) {
        problems.push(
          `user ${user.userId} ${c}: statement entries sum to ${formatAmount(entries, c)} but the balance is ${formatAmount(balance, c)} — difference ${formatAmount(entries - balance, c)} ${c}`,
        );
      }
    }
  }
  return problems;
}
