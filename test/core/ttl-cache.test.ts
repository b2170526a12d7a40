import { TtlCache } from '../../functions/core/ttl-cache';

describe('TtlCache', () => {
  it('expires entries after their time to live', () => {
    let now = 0;
    const cache = new TtlCache<string>(1000, 10, () => now);
    cache.set('a', 'x');
    now = 999;
    expect(cache.get('a')).toBe('x');
    now = 1000;
    expect(cache.get('a')).toBeUndefined();
  });

  it('never keeps an entry longer than its own ttl, nor longer than the cache ttl', () => {
    let now = 0;
    const cache = new TtlCache<string>(1000, 10, () => now);
    cache.set('short', 'x', 100);
    cache.set('long', 'y', 60_000);
    now = 100;
    expect(cache.get('short')).toBeUndefined();
    now = 999;
    expect(cache.get('long')).toBe('y');
    now = 1000;
    expect(cache.get('long')).toBeUndefined();
  });

  it('evicts the oldest entry when full', () => {
    const cache = new TtlCache<number>(1000, 2, () => 0);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBe(2);
    expect(cache.get('c')).toBe(3);
  });

  it('caches nothing with a zero ttl', () => {
    const cache = new TtlCache<number>(0);
    cache.set('a', 1);
    expect(cache.get('a')).toBeUndefined();
  });
});
