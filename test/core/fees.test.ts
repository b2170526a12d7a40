import { ConfigurationError, config, resetForTests } from '../../functions/config';
import { PLATFORM_FEE_RATE, platformFee, withdrawalFees } from '../../functions/core/fees';

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

describe('withdrawalFees (3% half up, then the flat account-creation fee)', () => {
  it.each([
    // gross, creation fee → platform fee, net (minor units)
    [1001, 0, 30, 971], // 10.01 USD: no account to create, the spec's split
    [1_000_000, 500_000, 30_000, 470_000], // 1 USDC to a fresh wallet: 1 − 0.03 − 0.50 = 0.47
    [20_000_000, 500_000, 600_000, 18_900_000], // 20 USDC: 20 − 0.60 − 0.50 = 18.90
    [16_666_667, 500_000, 500_000, 15_666_667], // 0.50000001 rounds half up to 0.500000; the flat fee adds nothing to round
    [1_000_001, 500_000, 30_000, 470_001], // the 3% of 1.000001 rounds down, the flat fee is exact
    [1_000_000, 970_000, 30_000, 0], // net exactly zero: refused by the use case, never paid
    [1_000_000, 1_000_000, 30_000, -30_000], // the fees exceed the gross: a negative net, refused too
  ])('gross %i with creation fee %i → fee %i, net %i', (gross, accountCreationFee, fee, net) => {
    expect(withdrawalFees(gross, accountCreationFee)).toEqual({ gross, fee, accountCreationFee, net });
  });

  it('keeps gross = fee + accountCreationFee + net exactly', () => {
    for (const gross of [1_000_000, 1_234_567, 99_999_999, Number.MAX_SAFE_INTEGER]) {
      const { fee, accountCreationFee, net } = withdrawalFees(gross, 500_000);
      expect(BigInt(fee) + BigInt(accountCreationFee) + BigInt(net)).toBe(BigInt(gross));
    }
  });

  it('is the platform fee alone without a creation fee', () => {
    expect(withdrawalFees(1001)).toEqual({ ...platformFee(1001), accountCreationFee: 0 });
  });

  it('refuses a negative or fractional creation fee', () => {
    expect(() => withdrawalFees(1_000_000, -1)).toThrow(RangeError);
    expect(() => withdrawalFees(1_000_000, 0.5)).toThrow(RangeError);
  });
});

describe('ACCOUNT_CREATION_FEE', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
    resetForTests();
  });
  const parse = (value: string | undefined) => {
    if (value === undefined) delete process.env.ACCOUNT_CREATION_FEE;
    else process.env.ACCOUNT_CREATION_FEE = value;
    resetForTests();
    return config().ACCOUNT_CREATION_FEE;
  };

  it('defaults to 0.50 USDC, in micro-USDC', () => expect(parse(undefined)).toBe(500_000));

  it('reads a decimal USDC amount exactly, as amounts are read', () => {
    expect(parse('0.5')).toBe(500_000);
    expect(parse('1.000001')).toBe(1_000_001);
    expect(parse('2')).toBe(2_000_000);
  });

  it('refuses zero, negatives, more than 6 decimals and more than 100 USDC at config parse, naming the variable', () => {
    for (const value of ['0', '-1', '0.0000001', '100.000001', 'half']) {
      expect(() => parse(value)).toThrow(ConfigurationError);
      expect(() => parse(value)).toThrow(/ACCOUNT_CREATION_FEE/);
    }
    expect(parse('100')).toBe(100_000_000);
  });
});
