import { PLATFORM_FEE_RATE, platformFee } from '../../functions/core/fees';

describe('platformFee (3%, half up to the minor unit)', () => {
  it.each([
    [1001, 30, 971], // 10.01 USD → 0.30 fee, 9.71 net (3% rounded half up)
    [100, 3, 97], // 1.00 USD → 0.03, 0.97
    [50, 2, 48], // 0.015 rounds half up to 0.02
    [49, 1, 48], // 0.0147 → 0.01
    [16, 0, 16], // 0.0048 → 0.00
    [17, 1, 16], // 0.0051 → 0.01
    [1_000_000, 30_000, 970_000], // 1 USDC
    [1_000_001, 30_000, 970_001], // 0.03000003 → 0.030000
    [0, 0, 0],
  ])('gross %i → fee %i, net %i', (gross, fee, net) => {
    expect(platformFee(gross)).toEqual({ gross, fee, net });
  });

  it('keeps gross = fee + net exactly at the top of the safe range', () => {
    const gross = Number.MAX_SAFE_INTEGER;
    const { fee, net } = platformFee(gross);
    expect(BigInt(fee) + BigInt(net)).toBe(BigInt(gross));
  });

  it('refuses a negative or fractional gross', () => {
    expect(() => platformFee(-1)).toThrow(RangeError);
    expect(() => platformFee(1.5)).toThrow(RangeError);
  });

  it('is labelled 3%', () => expect(PLATFORM_FEE_RATE).toBe('3%'));
});
