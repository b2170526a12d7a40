import type { Minor } from './money';

/** Platform fee on withdrawals, in basis points (3%). */
export const PLATFORM_FEE_BPS = 300;
export const PLATFORM_FEE_RATE = '3%';

export interface FeeBreakdown {
  gross: Minor;
  fee: Minor;
  net: Minor;
}

/**
 * 3% of gross, rounded half up to the currency's minor unit; net = gross − fee.
 * 10.01 USD → fee 0.30, net 9.71. Integer arithmetic only (BigInt so no product can lose bits).
 */
export function platformFee(gross: Minor): FeeBreakdown {
  if (!Number.isSafeInteger(gross) || gross < 0) throw new RangeError(`invalid gross amount: ${gross}`);
  const fee = Number((BigInt(gross) * BigInt(PLATFORM_FEE_BPS) + 5000n) / 10000n);
  return { gross, fee, net: gross - fee };
}
