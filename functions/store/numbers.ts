/**
 * Reading money attributes back. The SDK hands a number above 2^53 back as a BigInt (and an
 * operator can type anything in the console); reading such a value as 0 would silently forge or
 * erase money, so anything but a safe integer fails loudly. Writes keep balances below the cap
 * (`headroom`), so a healthy table never holds one.
 */
import { MAX_BALANCE_MINOR, type Minor } from '../core/money';

/** A money or counter attribute that is not a safe integer: the item needs an operator. */
export class CorruptAmountError extends Error {
  constructor(item: Record<string, unknown>, attribute: string) {
    super(`item ${String(item.PK)} / ${String(item.SK)}: ${attribute} is not a safe integer (${typeof item[attribute]})`);
    this.name = 'CorruptAmountError';
  }
}

/** The attribute as minor units (or a count); absent means 0. */
export function readMinor(item: Record<string, unknown>, attribute: string): Minor {
  const value = item[attribute];
  if (value === undefined) return 0;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  throw new CorruptAmountError(item, attribute);
}

/**
 * The condition value under which adding `amount` keeps a balance within MAX_BALANCE_MINOR:
 * `attribute_not_exists(#cur) OR #cur <= :headroom`.
 */
export const headroom = (amount: Minor): Minor => MAX_BALANCE_MINOR - amount;
