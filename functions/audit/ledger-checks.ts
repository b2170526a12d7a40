/**
 * The ledger audit's first invariant, per currency, over typed rows (functions/store/
 * ledger-rows.mapper.ts parses the stored items): every unit credited is somewhere — a balance, a
 * hold, a payout, a fee, a reversal — and the rows every check may read (`Rows`). The other checks
 * live by what they tie together: balance-checks.ts (each agent's and payer's balance),
 * payout-checks.ts (fees and locks), charge-checks.ts (lifecycles, grants, x402 credits). Each
 * returns what it found: figures that a report shows, or one sentence per break. `ledger-audit.ts`
 * runs them all and states the verdict.
 */
import { CURRENCIES, type Currency, formatAmount, type Minor } from '../core/money';
import type { CreditRow, ReversalRow, ShardRow, StatementRow, UserRow } from '../store/audit/ledger-rows.balances';
import type { X402PaymentRow, X402SettlementRow } from '../store/audit/ledger-rows.chain';
import type { ChargeRow, GrantRow } from '../store/audit/ledger-rows.charges';
import type { LockRow, PayoutRow } from '../store/audit/ledger-rows.payouts';

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
  /** The payers' statement entries (absent: none; docs/statement.md). */
  statements?: readonly StatementRow[];
}
/** Not final: PENDING, PROCESSING, or HELD (its agent disabled; still debited, still locked). */
export const inFlight = (p: PayoutRow) => p.status === 'PENDING' || p.status === 'PROCESSING' || p.status === 'HELD';

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
