/**
 * The ledger audit's checks of payouts (ledger-checks.ts has the whole): each payout's gross split
 * into net and fees as core/fees.ts says, each agent's fee basis against its counted payouts, and
 * each in-flight payout holding its agent's lock. Pure; one sentence per break.
 */

import { platformFee, withdrawalFees } from '../core/fees';
import { formatAmount, isCurrencyOn, type Minor } from '../core/money';
import { offers } from '../rails/registrations';
import type { X402PaymentRow } from '../store/audit/ledger-rows.chain';
import type { FeeBasisRow, LockRow, PayoutRow } from '../store/audit/ledger-rows.payouts';
import { inFlight } from './ledger-checks';

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
    if (p.refundOf !== undefined) {
      // An x402 refund takes no fee: the payer gets all of it (DESIGN §28).
      if (p.fee !== 0 || p.accountCreationFee !== 0 || p.netAmount !== p.amount || !isCurrencyOn(p.currency, 'solana'))
        problems.push(
          `refund ${p.payoutId}: ${f(p.amount)} ${p.currency} should pay all of it in USDC with no fee, found fee ${f(p.fee)} + net ${f(p.netAmount)}`,
        );
      continue;
    }
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
  // Refunds of x402 payments take no lock (store/x402-refunds).
  for (const p of payouts.filter((p) => inFlight(p) && p.refundOf === undefined)) {
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
 * Each x402 payment's refunds (DESIGN §28): the ones that were not FAILED add up to its `refunded`
 * counter, which never passes the payment; a refund names a payment of its own agent.
 */
export function x402RefundProblems(payouts: readonly PayoutRow[], payments: readonly X402PaymentRow[]): string[] {
  const problems: string[] = [];
  const byPayment = new Map(payments.map((p) => [`${p.agentId}/${p.paymentId}`, p]));
  const sums = new Map<string, Minor>();
  for (const r of payouts) {
    if (r.refundOf === undefined) continue;
    const key = `${r.agentId}/${r.refundOf}`;
    if (!byPayment.has(key))
      problems.push(`refund ${r.payoutId} of agent ${r.agentId} names payment ${r.refundOf}, which is not one of its payments`);
    if (r.status !== 'FAILED') sums.set(key, (sums.get(key) ?? 0) + r.amount);
  }
  for (const p of payments) {
    const f = (m: Minor) => formatAmount(m, 'USDC');
    const sum = sums.get(`${p.agentId}/${p.paymentId}`) ?? 0;
    const refunded = p.refunded ?? 0;
    if (sum !== refunded) problems.push(`x402 payment ${p.paymentId}: refunded says ${f(refunded)}, its refunds add up to ${f(sum)}`);
    if (refunded > p.amount) problems.push(`x402 payment ${p.paymentId}: refunded ${f(refunded)} of a ${f(p.amount)} payment`);
  }
  return problems;
}
