/** Payouts: an agent's withdrawal, paid by a rail (docs/payouts.md has the state machine). */
import type { Currency, Minor } from './money';
import type { RailState } from './payout-rail';
import type { PayoutNetwork } from './withdrawals';

export type PayoutStatus = 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED';
export type InflightStatus = Extract<PayoutStatus, 'PENDING' | 'PROCESSING'>;

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
}

export interface PayoutRef {
  agentId: string;
  payoutId: string;
}
