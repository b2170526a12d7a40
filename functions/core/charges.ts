/** Charges: an agent's debit of a user's balance. */
import type { Currency, Minor } from './money';

export type ChargeStatus = 'PENDING' | 'SUCCESS' | 'FAILED' | 'EXPIRED';

export interface Charge {
  id: string;
  agentId: string;
  userId: string;
  idempotencyKey: string;
  amount: Minor;
  currency: Currency;
  description: string;
  status: ChargeStatus;
  createdAt: string;
  /** The agent's name when charged (the user's history shows it without a read per row). */
  agentName?: string;
  /** Why a FAILED charge failed: the refusal's exact error string, or `declined by user`. */
  failureReason?: string;
  /** Why a PENDING charge waits: the user's approval, or (holds) the agent's capture. */
  pendingReason?: PendingReason;
  /** When a PENDING charge expires (ISO). */
  expiresAt?: string;
  /**
   * Authorize-then-capture (`capture: false`, docs/lifecycle.md): how long the hold lasts once it
   * waits for the capture, in seconds. Present exactly on holds.
   */
  holdSeconds?: number;
  /** Holds: the amount authorized (held). `amount` is what was captured once SUCCESS. */
  authorizedAmount?: Minor;
  /** What was given back to the user by refunds, cumulative (absent: none). */
  refundedAmount?: Minor;
}

/** The failureReason of a hold the agent released. */
export const RELEASED_BY_AGENT = 'released by agent';

export type PendingReason = 'user_approval' | 'capture';
