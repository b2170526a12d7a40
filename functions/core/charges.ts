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
}

export type PendingReason = 'user_approval' | 'capture';
