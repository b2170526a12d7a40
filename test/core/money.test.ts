import { AmountError, DECIMALS, formatAmount, parseAmount, unitsToMinor } from '../../functions/core/money';

const MAX = 1_000_000_000_000;

describe('parseAmount', () => {
  it.each([
    ['1', 'USD', 100],
    ['1.5', 'USD', 150],
    ['1.50', 'USD', 150],
    ['0.01', 'USD', 1],
    ['10.01', 'USD', 1001],
    ['1.000', 'USD', 100],
    ['15e-1', 'USD', 150],
    ['1E2', 'USD', 10000],
    ['0.000001', 'USDC', 1],
    ['1.123456', 'USDC', 1_123_456],
    ['1.1234560', 'USDC', 1_123_456],
    ['20', 'USDC', 20_000_000],
  ] as const)('reads %s %s as %i minor units', (literal, currency, minor) => {
    expect(parseAmount(literal, currency, MAX)).toBe(minor);
  });

  it.each([
    ['1.005', 'USD', 'more than 2 decimal places'],
    ['0.001', 'USD', 'more than 2 decimal places'],
    ['1.0000001', 'USDC', 'more than 6 decimal places'],
    ['1e-7', 'USDC', 'more than 6 decimal places'],
    ['1.0000000000000001', 'USD', 'more than 2 decimal places'],
    ['0', 'USD', 'greater than 0'],
    ['0.00', 'USD', 'greater than 0'],
    ['-1', 'USD', 'greater than 0'],
    ['-0', 'USD', 'greater than 0'],
    ['abc', 'USD', 'must be a number'],
    ['1.', 'USD', 'must be a number'],
    ['.5', 'USD', 'must be a number'],
    ['01', 'USD', 'must be a number'],
    ['NaN', 'USD', 'must be a number'],
    ['Infinity', 'USD', 'must be a number'],
    ['1e999999999', 'USD', 'must not exceed'],
    ['1e-999999999', 'USDC', 'more than 6 decimal places'],
  ] as const)('rejects %s %s (%s), never rounds', (literal, currency, message) => {
    expect(() => parseAmount(literal, currency, MAX)).toThrow(AmountError);
    expect(() => parseAmount(literal, currency, MAX)).toThrow(message);
  });

  it('rejects amounts above the maximum and accepts the maximum itself', () => {
    expect(parseAmount('100', 'USD', 10_000)).toBe(10_000);
    expect(() => parseAmount('100.01', 'USD', 10_000)).toThrow('amount must not exceed 100');
  });

  it('names the field it was given', () => {
    expect(() => parseAmount('x', 'USD', MAX, 'price')).toThrow('price must be a number');
  });
});

describe('formatAmount', () => {
  it.each([
    [150, 'USD', '1.5'],
    [100, 'USD', '1'],
    [1, 'USD', '0.01'],
    [0, 'USD', '0'],
    [-150, 'USD', '-1.5'],
    [1, 'USDC', '0.000001'],
    [20_000_000, 'USDC', '20'],
    [9_007_199_254_740_991, 'USDC', '9007199254.740991'],
  ] as const)('writes %i %s as %s', (minor, currency, text) => {
    expect(formatAmount(minor, currency)).toBe(text);
  });

  it('refuses a non-integer', () => {
    expect(() => formatAmount(1.5, 'USD')).toThrow(RangeError);
  });

  it('round-trips every precision edge', () => {
    for (const currency of ['USD', 'USDC'] as const) {
      for (const minor of [1, 9, 10, 99, 100, 101, 10 ** DECIMALS[currency] - 1, 10 ** DECIMALS[currency], 123_456_789]) {
        expect(parseAmount(formatAmount(minor, currency), currency, MAX)).toBe(minor);
      }
    }
  });
});

describe('unitsToMinor', () => {
  it('converts configuration units', () => {
    expect(unitsToMinor(1, 'USD')).toBe(100);
    expect(unitsToMinor(1, 'USDC')).toBe(1_000_000);
  });
});
