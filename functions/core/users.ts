/** Users (payers) and their prepaid balances, in minor units per currency. */
import type { Currency, Minor } from './money';

export type Balances = Record<Currency, Minor>;

export interface User {
  id: string;
  balances: Balances;
  createdAt: string;
}

export const zeroBalances = (): Balances => ({ USD: 0, USDC: 0 });
