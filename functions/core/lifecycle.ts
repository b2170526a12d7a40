/**
 * The agent's decisions on a charge it made (docs/lifecycle.md): capture or release a hold, refund
 * a charge. Pure: they take the charge (and for a refund the agent's shards) as read and return
 * what to write or why not, in the contract's order of precedence; the use case turns a refusal
 * into its public answer and the store makes a decision durable, under conditions that refuse it
 * again if what was read has moved.
 */
import type { Charge, PendingReason } from './charges';
import { type AgentLedger, planShardDebit, type ShardDebit } from './ledger';
import type { Currency, Minor } from './money';

/** What a capture or release needs of the PENDING charge it acts on. */
export type PendingHold = Pick<Charge, 'amount' | 'expiresAt' | 'pendingReason'>;

export type CaptureDecision =
  | { kind: 'capture'; captured: Minor; authorized: Minor }
  /** In this order: more than was held (400), the hold has run out (409), it still waits for the payer (409). */
  | { kind: 'refused'; reason: 'exceeds-authorized' | 'expired' | 'awaits-approval' };

/** Whether a PENDING charge has run out at `now` (one without an end is taken as run out). */
export const holdExpired = (hold: Pick<Charge, 'expiresAt'>, now: Date): boolean => now.toISOString() >= (hold.expiresAt ?? '');

/**
 * A capture of `requested` (all that was held when absent) from a PENDING hold at `now`: the
 * charge becomes SUCCESS for `captured`, and `authorized - captured` goes back to the payer.
 */
export function decideCapture(hold: PendingHold, requested: Minor | undefined, now: Date): CaptureDecision {
  const authorized = hold.amount;
  const captured = requested ?? authorized;
  if (captured > authorized) return { kind: 'refused', reason: 'exceeds-authorized' };
  if (holdExpired(hold, now)) return { kind: 'refused', reason: 'expired' };
  if (hold.pendingReason === 'user_approval') return { kind: 'refused', reason: 'awaits-approval' };
  return { kind: 'capture', captured, authorized };
}

/** A release of a PENDING charge at `now`: all of it goes back, unless it has run out already. */
export function decideRelease(hold: PendingHold, now: Date): { kind: 'release' } | { kind: 'refused'; reason: 'expired' } {
  return holdExpired(hold, now) ? { kind: 'refused', reason: 'expired' } : { kind: 'release' };
}

export type RefundDecision =
  | { kind: 'refund'; amount: Minor; plan: ShardDebit[] }
  /** In this order: not a SUCCESS charge (409), more than is left or nothing (400). */
  | { kind: 'refused'; reason: 'not-refundable' | 'exceeds-refundable' }
  /** The charge allows it, but the agent's shards as read hold too little in all. */
  | { kind: 'short' };

/** What is left to refund of a charge: its amount less what refunds gave back already. */
export const refundableLeft = (charge: Pick<Charge, 'amount' | 'refundedAmount'>): Minor => charge.amount - (charge.refundedAmount ?? 0);

/**
 * A refund of the charge as read, from the agent's shards as read. `requested` is asked for only
 * once the charge is refundable (the contract checks the charge before the amount's text: a bad
 * amount on a PENDING charge is still 409); undefined means all that is left. The debit is spread
 * over the shards, largest first (`planShardDebit`): no one shard need hold it.
 */
export function decideRefund(
  charge: Pick<Charge, 'status' | 'amount' | 'refundedAmount' | 'currency'>,
  ledger: AgentLedger,
  requested: (currency: Currency) => Minor | undefined,
): RefundDecision {
  if (charge.status !== 'SUCCESS') return { kind: 'refused', reason: 'not-refundable' };
  const left = refundableLeft(charge);
  const amount = requested(charge.currency) ?? left;
  if (amount > left || amount === 0) return { kind: 'refused', reason: 'exceeds-refundable' };
  const plan = planShardDebit(ledger, charge.currency, amount);
  return plan ? { kind: 'refund', amount, plan } : { kind: 'short' };
}

export type SettleDecision = { kind: 'settle' } | { kind: 'refused'; reason: 'expired' | 'not-pending' };

/**
 * Whether the payer (approve, decline, release) or the sweeper (expiry) may end a PENDING charge
 * at `now`: past its end only the expiry may (409 `charge expired` for anyone else, even before
 * the sweeper has run); a hold the payer approved waits for the agent's capture, so the payer's
 * decision is made (409 not pending) unless the payer ends any open hold (`anyReason`: release).
 */
export function decideSettlement(
  pending: { expiresAt: string; pendingReason?: PendingReason | undefined },
  opts: { expiry: boolean; anyReason: boolean },
  now: Date,
): SettleDecision {
  if (!opts.expiry && now.toISOString() >= pending.expiresAt) return { kind: 'refused', reason: 'expired' };
  if (pending.pendingReason !== 'user_approval' && !opts.anyReason) return { kind: 'refused', reason: 'not-pending' };
  return { kind: 'settle' };
}
