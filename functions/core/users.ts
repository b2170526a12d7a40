/** Users (payers) and their prepaid balances, in minor units per currency. */
import type { Currency, Minor } from './money';
import type { SpendingPolicy } from './policy';

export type Balances = Record<Currency, Minor>;

export interface User {
  id: string;
  balances: Balances;
  /** Money in PENDING charges: taken from the balance, not yet the agent's. */
  held: Balances;
  /** Reversed top-ups the balance could not cover (docs/topups.md): paid first by the next top-up. */
  owed: Balances;
  policy: SpendingPolicy;
  /** Bumped by every policy change; a charge judged under an older one is retried. */
  policyVersion: number;
  createdAt: string;
}

/**
 * What a charge needs to know of its payer without reading: the policy and the spend counters'
 * periods, as last seen. Cached per container and corrected from the item DynamoDB returns when
 * a charge's condition fails, so a stale copy costs a retry, never a wrong answer.
 */
export interface PayerState {
  policy: SpendingPolicy;
  policyVersion: number;
  /** The UTC day / month the item's spend counters are for (undefined: none yet). */
  day: string | undefined;
  month: string | undefined;
}

export const zeroBalances = (): Balances => ({ USD: 0, USDC: 0 });
