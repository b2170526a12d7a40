/**
 * The ledger audit's invariants, one pure function each, over typed rows (functions/store/
 * ledger-rows.mapper.ts parses the stored items). Each returns what it found: figures that a report
 * shows, or one sentence per break. `ledger-audit.ts` runs them all and states the verdict.
 */
import { platformFee, withdrawalFees } from '../core/fees';
import { CURRENCIES, type Currency, formatAmount, type Minor } from '../core/money';
import { offers } from '../rails/registrations';
import type {
  ChargeRow,
  CreditRow,
  FeeBasisRow,
  GrantRow,
  LockRow,
  PayoutRow,
  ReversalRow,
  ShardRow,
  UserRow,
  X402PaymentRow,
  X402SettlementRow,
} from '../store/ledger-rows.mapper';

export interface CurrencyTotals {
  /** Money in: the sum of CREDITS# records. */
  credited: Minor;
  userBalances: Minor;
  agentBalances: Minor;
  held: Minor;
  payoutsPaidNet: Minor;
  /** The platform's revenue from COMPLETED payouts: the 3% fees and the account-creation fees. */
  platformFees: Minor;
  inFlightGross: Minor;
  /**
   * Money PayPal took back from credited top-ups that left the books: what reversals debited
   * from balances, and what later top-ups paid of the resulting debts (docs/topups.md).
   */
  reversed: Minor;
  /** userBalances + agentBalances + held + payoutsPaidNet + platformFees + inFlightGross + reversed. */
  accountedFor: Minor;
  /** credited + x402Received − accountedFor: zero when the ledger balances. */
  difference: Minor;
  /** Money in by x402 (docs/x402.md): payments credited to agents (X402PAY# records; USDC only). */
  x402Received?: Minor;
  /** Money out by x402 purchases (DESIGN §22): SUCCESS purchases, paid to sellers by the hot wallet (USDC only). */
  x402Purchased?: Minor;
}

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

/** The rows an invariant may read; each check takes only the kinds it needs. */
export interface Rows {
  users: readonly UserRow[];
  shards: readonly ShardRow[];
  credits: readonly CreditRow[];
  charges: readonly ChargeRow[];
  payouts: readonly PayoutRow[];
  locks: readonly LockRow[];
  /** Reversed top-ups (absent: none). */
  reversals?: readonly ReversalRow[];
  /** x402 payments credited to agents, and the settlements they were credited for (absent: none). */
  x402Payments?: readonly X402PaymentRow[];
  x402Settlements?: readonly X402SettlementRow[];
  /** Grants, whose counters their charges explain (absent: none). */
  grants?: readonly GrantRow[];
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

/** Not final: PENDING, PROCESSING, or HELD (its agent disabled; still debited, still locked). */
const inFlight = (p: PayoutRow) => p.status === 'PENDING' || p.status === 'PROCESSING' || p.status === 'HELD';

/**
 * The invariant itself, per currency: credited = user balances + agent balances + held (PENDING
 * charges) + paid out net + platform fees (3% and account-creation fees) + in flight gross (FAILED
 * payouts were refunded, creation fee included) + reversed (taken back by PayPal: debited from
 * balances, or paid of a debt by a later top-up).
 *
 * Held money is counted once, from the PENDING charges; the users' `held<currency>` attributes are
 * not added again. `heldMismatches` ties the two per user, so a held attribute that drifted from
 * its charges is named there even though this total still balances.
 */
export function currencyTotals(
  rows: Pick<Rows, 'users' | 'shards' | 'credits' | 'charges' | 'payouts' | 'reversals' | 'x402Payments'>,
): Record<Currency, CurrencyTotals> {
  const totals = Object.fromEntries(
    CURRENCIES.map((c) => [
      c,
      {
        credited: 0,
        userBalances: 0,
        agentBalances: 0,
        held: 0,
        payoutsPaidNet: 0,
        platformFees: 0,
        inFlightGross: 0,
        reversed: 0,
        accountedFor: 0,
        difference: 0,
      },
    ]),
  ) as Record<Currency, CurrencyTotals>;
  for (const credit of rows.credits) {
    totals[credit.currency].credited += credit.amount;
    totals[credit.currency].reversed += credit.owedRepaid ?? 0;
  }
  for (const reversal of rows.reversals ?? []) totals[reversal.currency].reversed += reversal.debited;
  for (const row of [...rows.users, ...rows.shards]) {
    const field = row.kind === 'user' ? 'userBalances' : 'agentBalances';
    for (const c of CURRENCIES) totals[c][field] += row.balances[c] ?? 0;
  }
  for (const charge of rows.charges) if (charge.status === 'PENDING') totals[charge.currency].held += charge.amount;
  for (const payout of rows.payouts) {
    const t = totals[payout.currency];
    if (payout.status === 'COMPLETED') {
      t.payoutsPaidNet += payout.netAmount;
      // The account-creation fee is revenue like the 3%: it stays with the platform, which paid
      // the new account's rent in SOL (outside this ledger).
      t.platformFees += payout.fee + payout.accountCreationFee;
    } else if (inFlight(payout)) {
      t.inFlightGross += payout.amount;
    }
  }
  for (const payment of rows.x402Payments ?? []) totals.USDC.x402Received = (totals.USDC.x402Received ?? 0) + payment.amount;
  for (const charge of rows.charges) {
    if (charge.purchase && charge.status === 'SUCCESS') {
      totals[charge.currency].x402Purchased = (totals[charge.currency].x402Purchased ?? 0) + charge.amount;
    }
  }
  for (const t of Object.values(totals)) {
    t.accountedFor =
      t.userBalances + t.agentBalances + t.held + t.payoutsPaidNet + t.platformFees + t.inFlightGross + t.reversed + (t.x402Purchased ?? 0);
    t.difference = t.credited + (t.x402Received ?? 0) - t.accountedFor;
  }
  return totals;
}

/** One sentence per currency whose totals do not balance. */
export function currencyProblems(totals: Record<Currency, CurrencyTotals>): string[] {
  return CURRENCIES.filter((c) => totals[c].difference !== 0).map((c) => {
    const t = totals[c];
    const f = (m: Minor) => formatAmount(m, c);
    return (
      `${c}: credited ${f(t.credited)}${t.x402Received ? ` + x402 ${f(t.x402Received)}` : ''} but accounted for ${f(t.accountedFor)} — difference ${f(t.difference)} ${c} ` +
      `(users ${f(t.userBalances)}, agents ${f(t.agentBalances)}, held ${f(t.held)}, paid net ${f(t.payoutsPaidNet)}, ` +
      `fees ${f(t.platformFees)}, in flight ${f(t.inFlightGross)}${t.reversed ? `, reversed ${f(t.reversed)}` : ''}` +
      `${t.x402Purchased ? `, x402 purchases ${f(t.x402Purchased)}` : ''})`
    );
  });
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
 * Every payout splits its gross into its fee, its account-creation fee, and net = gross − fee −
 * account-creation fee > 0 (core/fees.ts); only a USDC payout may carry a creation fee. The fee of
 * a payout from before the fee basis is 3% of its gross, half up; a counted one's is what took the
 * agent's total to 3% of all it withdrew (`feeBasisProblems` checks the totals), which is within
 * one minor unit of 3% of its own gross.
 */
export function payoutSplitProblems(payouts: readonly PayoutRow[]): string[] {
  const problems: string[] = [];
  for (const p of payouts) {
    const f = (m: Minor) => formatAmount(m, p.currency);
    if (p.accountCreationFee > 0 && !offers(p.currency, 'tokenAccounts')) {
      problems.push(`payout ${p.payoutId}: a ${p.currency} payout carries an account-creation fee of ${f(p.accountCreationFee)}`);
      continue;
    }
    const expected = withdrawalFees(p.amount, p.accountCreationFee);
    const feeFits = p.feeCounted ? p.fee >= 0 && Math.abs(p.fee - expected.fee) <= 1 : p.fee === expected.fee;
    const net = p.amount - p.fee - p.accountCreationFee;
    if (feeFits && p.netAmount === net && net > 0) continue;
    if (p.feeCounted) {
      problems.push(
        `payout ${p.payoutId}: gross ${f(p.amount)} ${p.currency} carries fee ${f(p.fee)} (3% of it alone is ${f(expected.fee)}) ` +
          `and net ${f(p.netAmount)}, which should be ${f(net)} and above zero`,
      );
      continue;
    }
    const creation = p.accountCreationFee > 0 ? ` + account creation ${f(p.accountCreationFee)}` : '';
    problems.push(
      `payout ${p.payoutId}: gross ${f(p.amount)} ${p.currency} should split into fee ${f(expected.fee)}${creation} ` +
        `+ net ${f(expected.net)}${expected.net > 0 ? '' : ' (not above zero: never payable)'}, found fee ${f(p.fee)} + net ${f(p.netAmount)}`,
    );
  }
  return problems;
}

/**
 * The platform fee over all of an agent's withdrawals (core/fees.ts `cumulativeFee`): per agent and
 * currency, its fee basis holds the gross and the fees of its counted payouts that were not
 * refunded (FAILED), and those fees are 3% of that gross, half up: exactly, so splitting a
 * withdrawal never paid less than one withdrawal of the sum. A counted payout without a basis,
 * or a basis without its payouts, is a problem too.
 */
export function feeBasisProblems(payouts: readonly PayoutRow[], bases: readonly FeeBasisRow[]): string[] {
  const problems: string[] = [];
  const lane = (agentId: string, currency: string) => `agent ${agentId} ${currency}`;
  const sums = new Map<string, { withdrawn: Minor; feesPaid: Minor }>();
  for (const p of payouts) {
    if (!p.feeCounted || p.status === 'FAILED') continue;
    const key = lane(p.agentId, p.currency);
    const sum = sums.get(key) ?? { withdrawn: 0, feesPaid: 0 };
    sums.set(key, { withdrawn: sum.withdrawn + p.amount, feesPaid: sum.feesPaid + p.fee });
  }
  const seen = new Set<string>();
  for (const b of bases) {
    const key = lane(b.agentId, b.currency);
    seen.add(key);
    const f = (m: Minor) => formatAmount(m, b.currency);
    const sum = sums.get(key) ?? { withdrawn: 0, feesPaid: 0 };
    if (sum.withdrawn !== b.withdrawn || sum.feesPaid !== b.feesPaid) {
      problems.push(
        `${key}: fee basis says ${f(b.withdrawn)} withdrawn and ${f(b.feesPaid)} in fees, its payouts that were not refunded ` +
          `${f(sum.withdrawn)} and ${f(sum.feesPaid)}`,
      );
    }
    const due = platformFee(b.withdrawn).fee;
    if (b.feesPaid !== due) {
      problems.push(`${key}: fees ${f(b.feesPaid)} on ${f(b.withdrawn)} withdrawn, where 3% of it (half up) is ${f(due)}`);
    }
  }
  for (const [key, sum] of sums) {
    if (!seen.has(key)) problems.push(`${key}: payouts counted ${sum.withdrawn} withdrawn without a fee basis`);
  }
  return problems;
}

/**
 * An agent has at most one payout in flight per currency, and its lock for that currency exists
 * exactly while one is, naming that payout: a lock that outlived its payout blocks every later
 * withdrawal in that currency.
 */
export function payoutLockProblems(payouts: readonly PayoutRow[], locks: readonly LockRow[]): string[] {
  const problems: string[] = [];
  const lane = (agentId: string, currency: string) => `agent ${agentId} ${currency}`;
  const inFlightByLane = new Map<string, string[]>();
  for (const p of payouts.filter(inFlight)) {
    const key = lane(p.agentId, p.currency);
    inFlightByLane.set(key, [...(inFlightByLane.get(key) ?? []), p.payoutId]);
  }
  for (const [key, ids] of inFlightByLane) {
    if (ids.length > 1) problems.push(`${key}: ${ids.length} payouts in flight at once (${ids.join(', ')})`);
  }
  const locked = new Set<string>();
  for (const lock of locks) {
    const key = lane(lock.agentId, lock.currency);
    locked.add(key);
    if (!(inFlightByLane.get(key) ?? []).includes(lock.payoutId)) {
      problems.push(`${key}: payout lock names ${lock.payoutId}, which is not in flight (a stuck lock blocks every withdrawal)`);
    }
  }
  for (const [key, ids] of inFlightByLane) {
    if (!locked.has(key)) problems.push(`${key}: payout ${ids.join(', ')} in flight without the payout lock`);
  }
  return problems;
}

/**
 * The charge lifecycle's own invariants, per charge (docs/lifecycle.md): refunds never pass what
 * was charged and only a SUCCESS charge has any; the operator's refunds (`operatorRefundedAmount`)
 * are a part of the charge's refunds, never more, and never of a purchase (it paid a seller, so the
 * operator's refund refuses it); a hold's captured amount is more than zero and at most what was
 * authorized, and a hold that did not succeed (PENDING, released, declined, expired) still shows
 * the whole authorized amount (nothing was taken from it).
 */
export function lifecycleProblems(charges: readonly ChargeRow[]): string[] {
  const problems: string[] = [];
  for (const c of charges) {
    const f = (m: Minor) => formatAmount(m, c.currency);
    if (c.refundedAmount < 0 || c.refundedAmount > c.amount) {
      problems.push(`charge ${c.chargeId}: refunded ${f(c.refundedAmount)} ${c.currency} of ${f(c.amount)}`);
    }
    if (c.refundedAmount > 0 && c.status !== 'SUCCESS')
      problems.push(`charge ${c.chargeId}: ${c.status} but refunded ${f(c.refundedAmount)}`);
    const byOperator = c.operatorRefundedAmount ?? 0;
    if (byOperator > c.refundedAmount) {
      problems.push(
        `charge ${c.chargeId}: the operator refunded ${f(byOperator)} ${c.currency} but its refunds total ${f(c.refundedAmount)}`,
      );
    }
    if (byOperator > 0 && c.purchase) problems.push(`charge ${c.chargeId}: a purchase, but the operator refunded ${f(byOperator)}`);
    if (c.authorizedAmount === undefined) continue;
    if (c.status === 'SUCCESS' && !(c.amount > 0 && c.amount <= c.authorizedAmount)) {
      problems.push(`charge ${c.chargeId}: captured ${f(c.amount)} ${c.currency} of an authorized ${f(c.authorizedAmount)}`);
    }
    if (c.status !== 'SUCCESS' && c.amount !== c.authorizedAmount) {
      problems.push(`charge ${c.chargeId}: ${c.status} hold of ${f(c.amount)} ${c.currency} but authorized ${f(c.authorizedAmount)}`);
    }
  }
  return problems;
}

/**
 * x402 credits against treasury inflow (docs/x402.md): every CREDITED settlement (a transaction the
 * chain confirmed into the treasury) has exactly its one payment record, for the same agent and
 * amount, and every payment record stands on a CREDITED settlement of its transaction. A PENDING or
 * FAILED settlement has none.
 */
export function x402Problems(rows: Pick<Rows, 'x402Payments' | 'x402Settlements'>): string[] {
  const problems: string[] = [];
  const bySignature = new Map<string, X402PaymentRow[]>();
  for (const p of rows.x402Payments ?? []) bySignature.set(p.transaction, [...(bySignature.get(p.transaction) ?? []), p]);
  const settled = new Set<string>();
  for (const s of rows.x402Settlements ?? []) {
    settled.add(s.signature);
    const payments = bySignature.get(s.signature) ?? [];
    if (s.status !== 'CREDITED') {
      if (payments.length > 0) problems.push(`x402 settlement ${s.signature} is ${s.status} but has ${payments.length} payment record(s)`);
      continue;
    }
    const [only, ...more] = payments;
    if (!only || more.length > 0) {
      problems.push(`x402 settlement ${s.signature} is CREDITED with ${payments.length} payment records (exactly one expected)`);
    } else if (only.agentId !== s.agentId || only.amount !== s.amount || (s.paymentId && s.paymentId !== only.paymentId)) {
      problems.push(`x402 settlement ${s.signature} does not match its payment ${only.paymentId} (agent, amount or id)`);
    }
  }
  for (const [signature, payments] of bySignature) {
    if (!settled.has(signature))
      problems.push(`x402 payment(s) ${payments.map((p) => p.paymentId).join(', ')} credit ${signature}, which has no settlement`);
  }
  return problems;
}

/**
 * A grant's counters against its charges (docs/grants.md, store/grant-charge.ts): `spent` = its
 * SUCCESS charges (what was captured) + its open holds (PENDING), in the grant's currency, and each
 * period counter (`spentDay`, `spentMonth`: `{p, v}`) = the same sum over the charges that period
 * counted. A release, decline or expiry gives a hold back, and a capture of less its uncaptured
 * rest, in the settlement's own transaction. **Refunds do not give back to the grant**: a refund
 * moves money from the agent back to the payer (store/charge-lifecycle.repository.ts) and leaves
 * the grant item alone, so a refunded charge, still SUCCESS, counts in full. Every charge made under
 * a grant is that grant's agent's and currency's, and names a grant that exists.
 */
export function grantProblems(rows: Pick<Rows, 'grants' | 'charges'>): string[] {
  const problems: string[] = [];
  const grants = new Map((rows.grants ?? []).map((g) => [g.grantId, g]));
  const byGrant = new Map<string, ChargeRow[]>();
  for (const c of rows.charges) {
    if (c.grantId === undefined) continue;
    const grant = grants.get(c.grantId);
    if (!grant) {
      problems.push(`charge ${c.chargeId} was made under grant ${c.grantId}, which does not exist`);
      continue;
    }
    if (c.agentId !== grant.agentId || c.currency !== grant.currency || c.userId !== grant.userId) {
      problems.push(
        `charge ${c.chargeId} of agent ${c.agentId} and user ${c.userId} in ${c.currency} was made under grant ${grant.grantId}, ` +
          `which is agent ${grant.agentId}'s from user ${grant.userId} in ${grant.currency}`,
      );
    }
    byGrant.set(c.grantId, [...(byGrant.get(c.grantId) ?? []), c]);
  }
  for (const g of grants.values()) {
    const f = (m: Minor) => formatAmount(m, g.currency);
    const counting = (byGrant.get(g.grantId) ?? []).filter((c) => c.status === 'SUCCESS' || c.status === 'PENDING');
    const sum = (charges: readonly ChargeRow[]) => charges.reduce((total, c) => total + c.amount, 0);
    const success = sum(counting.filter((c) => c.status === 'SUCCESS'));
    const held = sum(counting.filter((c) => c.status === 'PENDING'));
    if (g.spent !== success + held) {
      problems.push(
        `grant ${g.grantId} ${g.currency}: spent ${f(g.spent)} ≠ SUCCESS charges ${f(success)} + open holds ${f(held)} ` +
          `— difference ${f(g.spent - success - held)}`,
      );
    }
    for (const [name, counter, period] of [
      ['spentDay', g.spentDay, 'day'],
      ['spentMonth', g.spentMonth, 'month'],
    ] as const) {
      if (!counter) continue;
      const expected = sum(counting.filter((c) => c[period] === counter.p));
      if (counter.v !== expected) {
        problems.push(
          `grant ${g.grantId} ${g.currency}: ${name} ${counter.p} holds ${f(counter.v)} ≠ its SUCCESS charges and open holds ` +
            `of that ${period} ${f(expected)} — difference ${f(counter.v - expected)}`,
        );
      }
    }
  }
  return problems;
}
