/**
 * Properties of the platform fee (3% of gross, half up to the minor unit; net = gross − fee) in
 * both precisions, checked with exact BigInt arithmetic rather than restating the formula.
 */
import fc from 'fast-check';
import { cumulativeFee, type FeeBasis, NO_FEE_BASIS, platformFee } from '../../functions/core/fees';
import { type Currency, DECIMALS, formatAmount, parseAmount } from '../../functions/core/money';

const gross = fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }));
const currency = fc.constantFrom<Currency>('USD', 'USDC');

describe('platform fee (properties)', () => {
  it('splits gross exactly into fee + net, both within [0, gross]', () => {
    fc.assert(
      fc.property(gross, (g) => {
        const { fee, net } = platformFee(g);
        expect(Number.isSafeInteger(fee) && Number.isSafeInteger(net)).toBe(true);
        expect(BigInt(fee) + BigInt(net)).toBe(BigInt(g));
        expect(fee).toBeGreaterThanOrEqual(0);
        expect(net).toBeGreaterThanOrEqual(0);
        expect(fee).toBeLessThanOrEqual(g);
      }),
      { numRuns: 3000 },
    );
  });

  it('is 3% of gross off by at most half a minor unit, ties rounded up', () => {
    fc.assert(
      fc.property(gross, (g) => {
        // In ten-thousandths of a minor unit: the exact fee is 300·g; rounding half up puts the error in (−5000, 5000].
        const error = BigInt(platformFee(g).fee) * 10_000n - BigInt(g) * 300n;
        expect(error > -5_000n && error <= 5_000n).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  it('is exact on every multiple of 100 minor units', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Math.floor(Number.MAX_SAFE_INTEGER / 100) }), (units) => {
        expect(platformFee(units * 100).fee).toBe(units * 3);
      }),
    );
  });

  it('never lets a larger withdrawal pay a smaller fee or receive a smaller net', () => {
    fc.assert(
      fc.property(gross, fc.integer({ min: 0, max: 1_000_000 }), (g, more) => {
        fc.pre(g + more <= Number.MAX_SAFE_INTEGER);
        const a = platformFee(g);
        const b = platformFee(g + more);
        expect(b.fee).toBeGreaterThanOrEqual(a.fee);
        expect(b.net).toBeGreaterThanOrEqual(a.net);
        // One more minor unit of gross moves the fee by at most one minor unit.
        if (more === 1) expect(b.fee - a.fee).toBeLessThanOrEqual(1);
      }),
      { numRuns: 2000 },
    );
  });

  it('splitting a withdrawal in two changes the total fee by at most one minor unit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 50 }), fc.integer({ min: 0, max: 2 ** 50 }), (a, b) => {
        const diff = platformFee(a + b).fee - platformFee(a).fee - platformFee(b).fee;
        expect(Math.abs(diff)).toBeLessThanOrEqual(1);
      }),
    );
  });

  it('agrees across precisions: the USDC fee of a USD-sized amount is exact, the USD fee within half a cent', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Math.floor(Number.MAX_SAFE_INTEGER / 10_000) }), (cents) => {
        const usd = platformFee(cents);
        const usdc = platformFee(cents * 10_000);
        expect(usdc.fee).toBe(cents * 300);
        const gap = usd.fee * 10_000 - usdc.fee;
        expect(gap > -5_000 && gap <= 5_000).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('round-trips the breakdown through its decimal JSON text in either currency', () => {
    fc.assert(
      fc.property(currency, fc.integer({ min: 1, max: 10 ** 14 }), (cur, g) => {
        const { fee, net } = platformFee(g);
        const max = Number.MAX_SAFE_INTEGER;
        const back = (m: number) => (m === 0 ? 0 : parseAmount(formatAmount(m, cur), cur, max));
        expect(back(g)).toBe(g);
        expect(back(fee)).toBe(fee);
        expect(back(net)).toBe(net);
        // No breakdown figure carries more decimals than its currency.
        for (const m of [g, fee, net]) expect(formatAmount(m, cur).split('.')[1]?.length ?? 0).toBeLessThanOrEqual(DECIMALS[cur]);
      }),
    );
  });

  it('matches the documented examples', () => {
    expect(platformFee(parseAmount('10.01', 'USD', 10 ** 9))).toEqual({ gross: 1001, fee: 30, net: 971 });
    expect(platformFee(parseAmount('1.00', 'USD', 10 ** 9))).toEqual({ gross: 100, fee: 3, net: 97 });
  });
});

/**
 * The fee counted over an agent's withdrawals (core/fees.ts `cumulativeFee`, docs/payouts.md): a
 * sequence of withdrawals, some refunded (FAILED or cancelled), run as the service runs them: one in
 * flight at a time, so a refund always undoes the last withdrawal, giving its gross and fee back.
 */
describe('cumulative platform fee (properties)', () => {
  /** A withdrawal (1.00 or more, in either precision) and whether its payout ends refunded. */
  const step = fc.record({
    gross: fc.oneof(fc.integer({ min: 100, max: 100_000 }), fc.integer({ min: 1_000_000, max: 10 ** 12 })),
    refunded: fc.boolean(),
  });

  function run(steps: readonly { gross: number; refunded: boolean }[]) {
    let basis: FeeBasis = NO_FEE_BASIS;
    const kept: { gross: number; fee: number }[] = [];
    const fees: { gross: number; fee: number }[] = [];
    for (const s of steps) {
      const fee = cumulativeFee(basis, s.gross);
      fees.push({ gross: s.gross, fee });
      const after = { withdrawn: basis.withdrawn + s.gross, feesPaid: basis.feesPaid + fee };
      // Refunded: the payout gives back exactly what it added; otherwise it stays.
      if (s.refunded) basis = { withdrawn: after.withdrawn - s.gross, feesPaid: after.feesPaid - fee };
      else {
        basis = after;
        kept.push({ gross: s.gross, fee });
      }
    }
    return { basis, kept, fees };
  }

  it('charges the kept withdrawals exactly 3% (half up) of their sum: a split never pays less than one withdrawal of the whole', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const { basis, kept } = run(steps);
        const withdrawn = kept.reduce((a, k) => a + k.gross, 0);
        const paid = kept.reduce((a, k) => a + k.fee, 0);
        expect(basis).toEqual({ withdrawn, feesPaid: paid });
        expect(paid).toBe(platformFee(withdrawn).fee);
        expect(paid).toBeGreaterThanOrEqual(platformFee(withdrawn).fee);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps every fee within one minor unit of 3% of its own gross, so never below zero or above the gross', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        for (const { gross: g, fee } of run(steps).fees) {
          expect(Math.abs(fee - platformFee(g).fee)).toBeLessThanOrEqual(1);
          expect(fee).toBeGreaterThanOrEqual(0);
          expect(fee).toBeLessThan(g);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('is the plain 3% for a first withdrawal: DESIGN §2 still holds (10.01 → 0.30, 1.00 → 0.03)', () => {
    fc.assert(fc.property(gross, (g) => expect(cumulativeFee(NO_FEE_BASIS, g)).toBe(platformFee(g).fee)));
    expect(cumulativeFee(NO_FEE_BASIS, 1001)).toBe(30);
    expect(cumulativeFee(NO_FEE_BASIS, 100)).toBe(3);
  });

  it('five withdrawals of 1.16 USD pay 0.03, 0.04, 0.03, 0.04, 0.03: 0.17 as one of 5.80, not 5 × 0.03', () => {
    const { fees } = run(Array.from({ length: 5 }, () => ({ gross: 116, refunded: false })));
    expect(fees.map((f) => f.fee)).toEqual([3, 4, 3, 4, 3]);
    expect(platformFee(580).fee).toBe(17);
  });

  it('refuses a basis whose fees are not 3% of what it withdrew, rather than charge a negative fee', () => {
    expect(() => cumulativeFee({ withdrawn: 100, feesPaid: 50 }, 100)).toThrow(RangeError);
    expect(() => cumulativeFee({ withdrawn: -1, feesPaid: 0 }, 100)).toThrow(RangeError);
  });
});
