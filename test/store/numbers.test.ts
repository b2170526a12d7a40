import { MAX_BALANCE_MINOR } from '../../functions/core/money';
import { CorruptAmountError, headroom, readMinor } from '../../functions/store/numbers';

describe('reading money attributes', () => {
  const item = (value: unknown) => ({ PK: 'USER#u1', SK: 'USER', USD: value });

  it('reads a safe integer as itself and an absent attribute as zero', () => {
    expect(readMinor(item(1234), 'USD')).toBe(1234);
    expect(readMinor({ PK: 'x', SK: 'y' }, 'USD')).toBe(0);
  });

  it.each([
    ['a BigInt (what the SDK returns above 2^53)', 2n ** 60n],
    ['a fraction', 1.5],
    ['a string typed in the console', '100'],
    ['an unsafe float', 2 ** 60],
  ])('fails loudly on %s instead of reading it as zero', (_, value) => {
    expect(() => readMinor(item(value), 'USD')).toThrow(CorruptAmountError);
    expect(() => readMinor(item(value), 'USD')).toThrow('USER#u1 / USER: USD is not a safe integer');
  });

  it('keeps every balance under a cap low enough that the sum of 64 shards stays exact', () => {
    expect(MAX_BALANCE_MINOR * 64).toBeLessThan(Number.MAX_SAFE_INTEGER);
    expect(headroom(100) + 100).toBe(MAX_BALANCE_MINOR);
  });
});
