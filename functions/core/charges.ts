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
}
