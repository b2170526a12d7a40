/**
 * Top-ups: money in, paid by the user on a rail (docs/topups.md). A top-up is PENDING until the
 * rail's payment is found and credited (COMPLETED, in the same transaction as the credit), its
 * window passes with nothing received (EXPIRED), or the rail did something the top-up cannot
 * take and an operator must look at (FAILED, with a `failureReason`). No AWS imports here.
 */
import type { Currency, Minor } from './money';

export type TopupStatus = 'PENDING' | 'COMPLETED' | 'EXPIRED' | 'FAILED';

/** A payer may have at most this many PENDING top-ups at once (each one is a PayPal order or a watched reference). */
export const MAX_OPEN_TOPUPS = 10;

/** Why a top-up ended FAILED: money may have moved at the rail, so each one is alarmed for an operator. */
export const TOPUP_FAILURE_REASONS = {
  /** PayPal captured the order in a currency other than the top-up's (nothing credited; recorded unmatched). */
  otherCurrency: 'paypal captured another currency',
  /** PayPal's capture stayed PENDING past the top-up's window (nothing credited; a later completion is recorded unmatched). */
  capturePending: 'paypal capture still pending after the window',
} as const;
export type TopupFailureReason = (typeof TOPUP_FAILURE_REASONS)[keyof typeof TOPUP_FAILURE_REASONS];

interface TopupBase {
  id: string;
  userId: string;
  status: TopupStatus;
  createdAt: string;
  expiresAt: string;
  /**
   * Amount received (COMPLETED); while PENDING the amount asked for: USD's ordered amount, and a
   * USDC top-up's when it named one (only a transfer of exactly it completes the top-up).
   */
  amount: Minor | undefined;
  /** The Solana signature or the PayPal capture id that was credited (FAILED: the capture, if any). */
  externalId: string | undefined;
  completedAt: string | undefined;
  /** FAILED only: why. */
  failureReason?: TopupFailureReason | undefined;
  /**
   * Whether this top-up holds one of its payer's MAX_OPEN_TOPUPS slots while PENDING (every one
   * opened since the cap; the slot is given back in the transaction that ends it).
   */
  holdsOpenSlot?: boolean;
}

export interface UsdcTopup extends TopupBase {
  currency: 'USDC';
  /** The platform's deposit wallet (owner address; the transfer lands in its USDC token account). */
  address: string;
  /** The Solana Pay reference: a fresh public key the paying transaction carries. */
  reference: string;
  mint: string;
  /**
   * The amount the payer asked to top up, when they named one: only a transfer of exactly this
   * completes the top-up (docs/topups.md "What completes a USDC top-up"). `amount` shows it while
   * PENDING, as a USD top-up's ordered amount.
   */
  requestedAmount?: Minor | undefined;
  /**
   * The watcher's place in the reference's history: the newest signature carrying it that was
   * resolved (failed, paid nothing in, credited or recorded), with every one before it; the next
   * run reads only what is newer. Undefined until the first such signature. Never shown.
   */
  scannedThrough: string | undefined;
}

export interface UsdTopup extends TopupBase {
  currency: 'USD';
  amount: Minor;
  /** The PayPal Orders v2 order id. */
  orderId: string;
  approveUrl: string;
}

export type Topup = UsdcTopup | UsdTopup;

/** What a rail says was received for a top-up, ready to be credited. */
export interface TopupPayment {
  /** `SOL#<signature>` or `PAYPAL#<captureId>`: the credit-once guard's key. */
  rail: 'SOL' | 'PAYPAL';
  externalId: string;
  amount: Minor;
  currency: Currency;
}

/** Why a payment to the deposit wallet matched no top-up (recorded for an operator, alarmed). */
export type UnmatchedReason =
  | 'no reference'
  | 'unknown reference'
  | 'expired reference'
  | 'top-up already completed'
  | 'wrong mint'
  | 'wrong currency'
  | 'top-up failed'
  | 'balance limit'
  /** Carried a top-up's reference, but not the amount the top-up asked for. */
  | 'wrong amount'
  /** Carried the reference of a top-up that asked for no amount, but less than TOPUP_USDC_MIN_AMOUNT. */
  | 'below minimum';

export interface UnmatchedPayment {
  signature: string;
  reason: UnmatchedReason;
  /** Minor units of `mint` received by the deposit wallet (raw token units for a foreign mint). */
  amount: string;
  mint: string;
  /** The top-up the reference belonged to, when there was one. */
  topupId: string | undefined;
  userId: string | undefined;
  slot: number;
}

/**
 * The Solana Pay transfer request for a USDC top-up: with `amount` (decimal USDC) when the top-up
 * asked for one, so the wallet fills it in; without, the wallet asks the payer.
 */
export function solanaPayUrl(t: { address: string; mint: string; reference: string; amount?: string | undefined }, label: string): string {
  const query = new URLSearchParams({
    ...(t.amount === undefined ? {} : { amount: t.amount }),
    'spl-token': t.mint,
    reference: t.reference,
    label,
    message: 'Top up your balance',
  });
  return `solana:${t.address}?${query.toString().replace(/\+/g, '%20')}`;
}

/** The top-up's state moved on (completed by another watcher or the webhook, or expired). */
export class TopupNotPendingError extends Error {
  constructor(readonly topupId: string) {
    super(`top-up ${topupId} is not pending`);
    this.name = 'TopupNotPendingError';
  }
}

/** This signature / capture id was already credited (its guard item exists): nothing to do. */
export class PaymentAlreadyCreditedError extends Error {
  constructor(readonly externalId: string) {
    super(`payment ${externalId} was already credited`);
    this.name = 'PaymentAlreadyCreditedError';
  }
}

/** The payer already has MAX_OPEN_TOPUPS PENDING top-ups. */
export class TopupLimitError extends Error {
  constructor() {
    super(`at most ${MAX_OPEN_TOPUPS} open top-ups`);
    this.name = 'TopupLimitError';
  }
}
