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

/** What a withdrawal costs, in minor units of its currency. */
export interface WithdrawalFees extends FeeBreakdown {
  /** The flat fee for creating the destination's USDC token account; 0 when the payout creates none. */
  accountCreationFee: Minor;
}

/**
 * The platform fee of `gross` (3%, half up, as `platformFee`) plus, when the payout creates the
 * destination's token account, the flat `accountCreationFee`: net = gross − fee − accountCreationFee.
 * The net may come out zero or negative; the caller refuses such a withdrawal (`amount too small to
 * cover fees`), it is never paid. Integer arithmetic only: the creation fee is a configured amount
 * in minor units, added and subtracted exactly, nothing rounded but the 3%.
 */
export function withdrawalFees(gross: Minor, accountCreationFee: Minor = 0): WithdrawalFees {
  if (!Number.isSafeInteger(accountCreationFee) || accountCreationFee < 0) {
    throw new RangeError(`invalid account creation fee: ${accountCreationFee}`);
  }
  const { fee, net } = platformFee(gross);
  return { gross, fee, accountCreationFee, net: net - accountCreationFee };
}
