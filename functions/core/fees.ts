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

/**
 * What an agent's payouts in one currency have been charged so far (minor units): the gross of its
 * withdrawals that were not refunded (FAILED or cancelled give theirs back) and the platform fees
 * they carry. The withdrawal commit keeps it beside the agent's payout lock (store/payouts/payout.repository.ts).
 */
export interface FeeBasis {
  withdrawn: Minor;
  feesPaid: Minor;
}

/** An agent's first counted withdrawal in a currency starts from nothing. */
export const NO_FEE_BASIS: FeeBasis = Object.freeze({ withdrawn: 0, feesPaid: 0 });

/**
 * The platform fee of a withdrawal of `gross` after `basis`: the fee of everything withdrawn so
 * far including this one (3%, half up, as `platformFee`), less what was already charged. So the
 * fees an agent pays in a currency always total round-half-up(3% × what it withdrew), and five
 * withdrawals of 1.16 pay 0.17 in all, as one of 5.80 does, where rounding each alone paid 0.15.
 * A first withdrawal pays exactly `platformFee(gross)`: 10.01 → 0.30, 1.00 → 0.03 (DESIGN §2).
 * The basis always holds `feesPaid = platformFee(withdrawn).fee` (a refunded payout was the last
 * one counted, as only one is ever in flight, and gives back exactly what it added), so the fee
 * is never below zero; a basis that broke it is refused rather than paid around.
 */
export function cumulativeFee(basis: FeeBasis, gross: Minor): Minor {
  for (const [name, value] of [
    ['withdrawn', basis.withdrawn],
    ['feesPaid', basis.feesPaid],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`invalid fee basis ${name}: ${value}`);
  }
  const fee = platformFee(basis.withdrawn + gross).fee - basis.feesPaid;
  if (fee < 0 || fee > gross) throw new RangeError(`fee basis ${basis.feesPaid} of ${basis.withdrawn} is not 3% of it`);
  return fee;
}

/** What a withdrawal costs, in minor units of its currency. */
export interface WithdrawalFees extends FeeBreakdown {
  /** The flat fee for creating the destination's USDC token account; 0 when the payout creates none. */
  accountCreationFee: Minor;
}

/**
 * The platform fee of `gross` after `basis` (`cumulativeFee`: 3% half up of everything withdrawn,
 * less what was charged before; with no basis, 3% of `gross` alone) plus, when the payout creates
 * the destination's token account, the flat `accountCreationFee`: net = gross − fee −
 * accountCreationFee. The net may come out zero or negative; the caller refuses such a withdrawal
 * (`amount too small to cover fees`), it is never paid. Integer arithmetic only: the creation fee
 * is a configured amount in minor units, added and subtracted exactly, nothing rounded but the 3%.
 */
export function withdrawalFees(gross: Minor, accountCreationFee: Minor = 0, basis: FeeBasis = NO_FEE_BASIS): WithdrawalFees {
  if (!Number.isSafeInteger(accountCreationFee) || accountCreationFee < 0) {
    throw new RangeError(`invalid account creation fee: ${accountCreationFee}`);
  }
  if (!Number.isSafeInteger(gross) || gross < 0) throw new RangeError(`invalid gross amount: ${gross}`);
  const fee = cumulativeFee(basis, gross);
  return { gross, fee, accountCreationFee, net: gross - fee - accountCreationFee };
}
