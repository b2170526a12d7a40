/**
 * Properties of money parsing and formatting, in both precisions (USD: 2 decimals, USDC: 6),
 * against an independent BigInt model of what a JSON number literal is worth.
 */
import fc from 'fast-check';
import type { ApiRequest } from '../../functions/contracts/api';
import { createChargeSchema } from '../../functions/contracts/request.schemas';
import { type Currency, DECIMALS, formatAmount, parseAmount } from '../../functions/core/money';
import { parseJsonBody } from '../../functions/http/body';

const currency = fc.constantFrom<Currency>('USD', 'USDC');
const digits = (min: number, max: number) =>
  fc.array(fc.constantFrom('0', '1', '2', '3', '4', '5', '6', '7', '8', '9'), { minLength: min, maxLength: max }).map((d) => d.join(''));

/** A JSON number literal with its parts, so the model can value it independently. */
interface Literal {
  text: string;
  negative: boolean;
  /** Exact value = mantissa / 10^scale (scale may be negative). */
  mantissa: bigint;
  scale: number;
}

const literal: fc.Arbitrary<Literal> = fc
  .record({
    negative: fc.boolean(),
    int: fc.oneof(
      fc.constant('0'),
      fc.tuple(fc.constantFrom('1', '2', '3', '4', '5', '6', '7', '8', '9'), digits(0, 11)).map(([a, b]) => a + b),
    ),
    frac: fc.option(digits(1, 10), { nil: undefined }),
    exp: fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 14 })), { nil: undefined }),
  })
  .map(({ negative, int, frac, exp }) => {
    const expValue = exp ? (exp[1] === '-' ? -exp[2] : exp[2]) : 0;
    const text = `${negative ? '-' : ''}${int}${frac === undefined ? '' : `.${frac}`}${exp ? `${exp[0]}${exp[1]}${exp[2]}` : ''}`;
    return { text, negative, mantissa: BigInt(int + (frac ?? '')), scale: (frac?.length ?? 0) - expValue };
  });

type Outcome = { minor: number } | { error: 'greater than 0' | 'decimal places' | 'must not exceed' };

/** What the literal must parse to: its exact value in minor units, or the reason it is refused. */
function model(lit: Literal, cur: Currency, maxMinor: number): Outcome {
  if (lit.mantissa === 0n || lit.negative) return { error: 'greater than 0' };
  // minor = mantissa × 10^(decimals − scale): an integer only if the division is exact.
  const shift = DECIMALS[cur] - lit.scale;
  let minor: bigint;
  if (shift >= 0) minor = lit.mantissa * 10n ** BigInt(shift);
  else {
    const div = 10n ** BigInt(-shift);
    if (lit.mantissa % div !== 0n) return { error: 'decimal places' };
    minor = lit.mantissa / div;
  }
  if (minor > BigInt(maxMinor)) return { error: 'must not exceed' };
  return { minor: Number(minor) };
}

function actual(text: string, cur: Currency, maxMinor: number): Outcome | { unexpected: string } {
  try {
    return { minor: parseAmount(text, cur, maxMinor) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    for (const reason of ['greater than 0', 'decimal places', 'must not exceed'] as const) {
      if (message.includes(reason)) return { error: reason };
    }
    return { unexpected: message };
  }
}

const maxMinor = fc.oneof(fc.integer({ min: 1, max: 10 ** 12 }), fc.constant(Number.MAX_SAFE_INTEGER));
const canonical = /^-?(0|[1-9]\d*)(\.\d*[1-9])?$/;

describe('money parsing and formatting (properties)', () => {
  it('values every JSON number literal exactly, or refuses it for the right reason (never rounds)', () => {
    fc.assert(
      fc.property(literal, currency, maxMinor, (lit, cur, max) => {
        expect(actual(lit.text, cur, max)).toEqual(model(lit, cur, max));
      }),
      { numRuns: 2000 },
    );
  });

  it('parses what it formats back to the same minor amount, in canonical text', () => {
    fc.assert(
      fc.property(currency, fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (cur, minor) => {
        const text = formatAmount(minor, cur);
        expect(text).toMatch(canonical);
        expect(text.split('.')[1]?.length ?? 0).toBeLessThanOrEqual(DECIMALS[cur]);
        expect(parseAmount(text, cur, Number.MAX_SAFE_INTEGER)).toBe(minor);
        expect(formatAmount(-minor, cur)).toBe(`-${text}`);
      }),
      { numRuns: 2000 },
    );
  });

  it('formats to the canonical form of any equivalent literal (trailing zeros, exponents)', () => {
    fc.assert(
      fc.property(
        currency,
        fc.integer({ min: 1, max: 10 ** 12 }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 0, max: 6 }),
        (cur, minor, zeros, e) => {
          const text = formatAmount(minor, cur);
          const padded = text.includes('.') ? text + '0'.repeat(zeros) : `${text}.${'0'.repeat(zeros + 1)}`;
          // minor / 10^d written as (minor · 10^e) e-(d+e)
          const exponent = `${BigInt(minor) * 10n ** BigInt(e)}e-${DECIMALS[cur] + e}`;
          for (const same of [padded, exponent]) {
            const parsed = parseAmount(same, cur, Number.MAX_SAFE_INTEGER);
            expect(parsed).toBe(minor);
            expect(formatAmount(parsed, cur)).toBe(text);
          }
        },
      ),
    );
  });

  it('refuses one more decimal than the currency has, whatever the digits', () => {
    fc.assert(
      fc.property(currency, fc.integer({ min: 0, max: 10 ** 9 }), fc.integer({ min: 1, max: 9 }), (cur, minor, extra) => {
        const base = formatAmount(minor, cur);
        const [whole, frac = ''] = base.split('.');
        const text = `${whole}.${frac.padEnd(DECIMALS[cur], '0')}${extra}`;
        expect(() => parseAmount(text, cur, Number.MAX_SAFE_INTEGER)).toThrow('decimal places');
      }),
    );
  });

  it('agrees across precisions: a USD amount is the same USDC amount × 10^4', () => {
    fc.assert(
      fc.property(literal, (lit) => {
        const usd = actual(lit.text, 'USD', Number.MAX_SAFE_INTEGER);
        const usdc = actual(lit.text, 'USDC', Number.MAX_SAFE_INTEGER);
        if ('minor' in usd && usd.minor * 10_000 <= Number.MAX_SAFE_INTEGER) {
          expect(usdc).toEqual({ minor: usd.minor * 10_000 });
          expect(formatAmount(usd.minor, 'USD')).toBe(formatAmount(usd.minor * 10_000, 'USDC'));
        }
        // Whatever USDC refuses for precision, USD refuses too.
        if ('error' in usdc && usdc.error === 'decimal places') expect(usd).toEqual({ error: 'decimal places' });
      }),
      { numRuns: 2000 },
    );
  });

  it('reads a request body amount exactly as sent, through the JSON parser and the configured maximum', () => {
    const maxUnits = 1_000_000; // config default MAX_AMOUNT
    fc.assert(
      fc.property(currency, fc.integer({ min: 1, max: maxUnits * 10 ** 6 }), (cur, minor) => {
        const text = formatAmount(minor, cur);
        const req: ApiRequest = {
          method: 'POST',
          path: '/api/v1/agents/charges',
          headers: {},
          query: {},
          params: {},
          body: `{"amount":${text},"currency":"${cur}","description":"p"}`,
          requestId: 'r',
        };
        if (minor <= maxUnits * 10 ** DECIMALS[cur]) expect(parseJsonBody(req, createChargeSchema).amount).toBe(minor);
        else expect(() => parseJsonBody(req, createChargeSchema)).toThrow('amount must not exceed');
      }),
      { numRuns: 1000 },
    );
  });
});
