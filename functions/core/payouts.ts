/** Payouts: an agent's withdrawal, paid by a rail (docs/payouts.md has the state machine). */
import type { Currency, Minor } from './money';
import type { RailState } from './payout-rail';
import type { PayoutNetwork } from './withdrawals';

/**
 * HELD: the agent was disabled before its payout was paid, so the worker stopped short of paying;
 * the money stays debited and the lock held until the operator releases it (back to PENDING, then
 * paid whatever the agent's state) or cancels it (FAILED, the gross back to the agent).
 */
export type PayoutStatus = 'PENDING' | 'PROCESSING' | 'HELD' | 'COMPLETED' | 'FAILED';
/** Not final: the payout still holds its agent's lock and carries an entry in the in-flight index. */
export type InflightStatus = Extract<PayoutStatus, 'PENDING' | 'PROCESSING' | 'HELD'>;

/** The failureReason of a held payout the operator cancelled. */
export const CANCELLED_BY_OPERATOR = 'cancelled by operator';
/** Why a payout is held (`holdReason`). */
export const HELD_AGENT_DISABLED = 'agent disabled';

export type { RailState } from './payout-rail';

export interface Payout {
  id: string;
  agentId: string;
  currency: Currency;
  status: PayoutStatus;
  network: PayoutNetwork;
  /** Solana wallet address or PayPal e-mail / payer id, exactly as given. */
  walletAddress: string;
  /** Gross amount debited from the agent (minor units). */
  amount: Minor;
  /** The 3% platform fee (core/fees.ts `cumulativeFee`: counted over the agent's withdrawals). */
  fee: Minor;
  /**
   * The fee was computed from the agent's fee basis and added to it, so a refund gives it back
   * there (absent on payouts from before the basis existed).
   */
  feeCounted?: boolean;
  /**
   * USDC: what the agent paid for the payout to create the destination's token account
   * (ACCOUNT_CREATION_FEE, charged when the withdrawal asked for it and the account was missing);
   * 0 when the payout creates none. Platform revenue like `fee`; the worker creates the account
   * exactly when it is above 0.
   */
  accountCreationFee: Minor;
  /** What the rail pays out: amount − fee − accountCreationFee. */
  netAmount: Minor;
  idempotencyKey: string;
  createdAt: string;
  /** Last transition or check; the reconciler measures staleness from here. */
  updatedAt: string;
  processedAt?: string;
  externalId?: string;
  txHash?: string;
  failureReason?: string;
  /** What the rail saved before acting (e.g. Solana signature + last valid block height). */
  railState?: RailState;
  /** How many times a worker or the reconciler has claimed it. */
  attempts: number;
  /** Set while HELD: when, and why (`HELD_AGENT_DISABLED`). */
  heldAt?: string;
  holdReason?: string;
  /**
   * When the operator released it from a hold: it is then paid although the agent is disabled,
   * unless the agent's enabled flag changed again after the release.
   */
  releasedAt?: string;
  /**
   * A refund of an x402 payment (DESIGN §28, id `xr…`): the payment it gives back. A refund is
   * paid as a USDC payout with no fee (net = gross) to the payment's payer, holds no payout lock,
   * and is never held by the kill switch (refunds return money).
   */
  paymentId?: string;
  /**
   * The refund creates the payer's token account when it is missing, at the service's cost: only
   * a payment's first refund does (store/x402-refunds), so a payer closing the account between
   * partial refunds cannot make each one cost the hot wallet the account's rent.
   */
  createsTokenAccount?: boolean;
}

/** Whether a payout is the refund of an x402 payment (`paymentId`), not an agent's withdrawal. */
export const isX402Refund = (payout: Pick<Payout, 'paymentId'>): boolean => payout.paymentId !== undefined;

export interface PayoutRef {
  agentId: string;
  payoutId: string;
}
