/**
 * Exact money. Inside the service an amount is an integer count of the currency's minor unit
 * (USD cents, micro-USDC). Outside it is a decimal JSON number. Input is parsed from the JSON
 * literal's own text, so `1.005` USD is rejected instead of being rounded by a float parse.
 */
import { AMOUNT_PROBLEMS, type AmountProblem } from '../messages/problems';

export const CURRENCIES = ['USD', 'USDC'] as const;
export type Currency = (typeof CURRENCIES)[number];

/** The rails money moves on (functions/rails/registry.ts registers each by (currency, rail)). */
export type RailName = 'paypal' | 'solana';

/** What a currency is, as data: whatever differs by currency is read from here, never branched on. */
export interface CurrencyInfo {
  /** Decimal places of its minor unit. */
  readonly decimals: number;
  /** The rail it is paid out and topped up on (its registration in functions/rails/registry.ts). */
  readonly rail: RailName;
  /** Paid to and from a wallet address on a chain: payouts carry transaction signatures, top-ups a deposit address. */
  readonly onChain: boolean;
  /** How a person is shown the currency with its rail (`USDC (Solana)`). */
  readonly method: string;
}

/**
 * Every currency's properties. The one place a currency is spelled out: the rest of functions/
 * reads these (test/architecture/currency-branches.test.ts refuses a `=== 'USD'` anywhere else).
 */
export const CURRENCY_INFO = {
  USD: { decimals: 2, rail: 'paypal', onChain: false, method: 'USD (PayPal)' },
  USDC: { decimals: 6, rail: 'solana', onChain: true, method: 'USDC (Solana)' },
} as const satisfies Readonly<Record<Currency, CurrencyInfo>>;

/** Decimal places of each currency's minor unit. */
export const DECIMALS: Readonly<Record<Currency, number>> = { USD: CURRENCY_INFO.USD.decimals, USDC: CURRENCY_INFO.USDC.decimals };

/** The currencies a rail carries (`CurrencyOn<'solana'>` is `'USDC'`). */
export type CurrencyOn<R extends RailName> = { [C in Currency]: (typeof CURRENCY_INFO)[C]['rail'] extends R ? C : never }[Currency];

/** Whether `currency` is one `rail` carries; narrows it (`isCurrencyOn(c, 'solana')`: c is `'USDC'`). */
export function isCurrencyOn<R extends RailName>(currency: unknown, rail: R): currency is CurrencyOn<R> {
  return isCurrency(currency) && CURRENCY_INFO[currency].rail === rail;
}

/**
 * Whether `value` is in a currency `rail` carries; narrows a union by its currency (a top-up
 * `isOnRail(topup, 'solana')` has a deposit address and a reference).
 */
export function isOnRail<T extends { readonly currency: unknown }, R extends RailName>(
  value: T | undefined,
  rail: R,
): value is T & { readonly currency: CurrencyOn<R> } {
  return value !== undefined && isCurrencyOn(value.currency, rail);
}

/** An integer number of minor units; always a safe integer. */
export type Minor = number;

/**
 * The largest balance any one item may hold, in minor units (2^46: about 700 billion USD or
 * 70 million USDC). Far enough below 2^53 that the sum over an agent's shards (at most 64) stays
 * an exact JavaScript number; every credit's condition keeps a balance under it.
 */
export const MAX_BALANCE_MINOR: Minor = 2 ** 46;

/**
 * An amount that is not acceptable: `problem` names why (messages/catalogue.ts AMOUNT_PROBLEMS),
 * `reason` is its words without the field's name.
 */
export class AmountError extends Error {
  constructor(
    field: string,
    readonly problem: AmountProblem,
    readonly reason: string,
  ) {
    super(`${field} ${reason}`);
    this.name = 'AmountError';
  }
}

const JSON_NUMBER = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

export function isCurrency(value: unknown): value is Currency {
  return typeof value === 'string' && (CURRENCIES as readonly string[]).includes(value);
}

/**
 * Parses the text of a JSON number into minor units of `currency`.
 * Rejects (never rounds) zero, negatives, more decimals than the currency has, and amounts
 * above `maxMinor`. Exponent notation is read exactly (`1e2` is 100).
 */
export function parseAmount(literal: string, currency: Currency, maxMinor: Minor, field = 'amount'): Minor {
  const m = JSON_NUMBER.exec(literal.trim());
  if (!m) throw new AmountError(field, 'number', AMOUNT_PROBLEMS.number);
  const [, sign, intPart = '', frac = '', expText] = m;
  let digits = (intPart + frac).replace(/^0+/, '');
  let scale = frac.length - Number(expText ?? '0');
  if (digits === '') throw new AmountError(field, 'positive', AMOUNT_PROBLEMS.positive);
  if (sign === '-') throw new AmountError(field, 'positive', AMOUNT_PROBLEMS.positive);
  // Trailing zeros carry no value: 1.50 has the same precision as 1.5.
  while (digits.endsWith('0') && scale > 0) {
    digits = digits.slice(0, -1);
    scale -= 1;
  }
  const decimals = DECIMALS[currency];
  if (scale > decimals) {
    throw new AmountError(field, 'tooManyDecimals', AMOUNT_PROBLEMS.tooManyDecimals(decimals, currency));
  }
  // digits × 10^(decimals − scale); a huge exponent is already far above any maximum.
  const shift = decimals - scale;
  if (digits.length + shift > String(maxMinor).length + 1) throw tooLarge(field, maxMinor, currency);
  const minor = BigInt(digits) * 10n ** BigInt(shift);
  if (minor > BigInt(maxMinor)) throw tooLarge(field, maxMinor, currency);
  return Number(minor);
}

function tooLarge(field: string, maxMinor: Minor, currency: Currency): AmountError {
  return new AmountError(field, 'tooLarge', AMOUNT_PROBLEMS.tooLarge(formatAmount(maxMinor, currency)));
}

/** Minor units → canonical decimal text (`150` USD → `"1.5"`, `20000000` USDC → `"20"`). */
export function formatAmount(minor: Minor, currency: Currency): string {
  if (!Number.isSafeInteger(minor)) throw new RangeError(`not an exact minor amount: ${minor}`);
  const decimals = DECIMALS[currency];
  const negative = minor < 0;
  const text = String(Math.abs(minor)).padStart(decimals + 1, '0');
  const whole = text.slice(0, text.length - decimals);
  const frac = text.slice(text.length - decimals).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

/** Whole currency units → minor units (configuration values such as the 1.00 withdrawal minimum). */
export function unitsToMinor(units: number, currency: Currency): Minor {
  return parseAmount(String(units), currency, Number.MAX_SAFE_INTEGER);
}
