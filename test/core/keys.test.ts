import bs58 from 'bs58';
import { AGENT_KEY_PREFIX, generateKey, hashKey, looksLikeKey, secretsEqual, USER_KEY_PREFIX } from '../../functions/core/keys';
import { fingerprint } from '../../functions/use-cases/idempotency';

describe('keys', () => {
  it('generates prefixed base58 keys carrying 32 random bytes', () => {
    const key = generateKey(AGENT_KEY_PREFIX);
    expect(key.startsWith('ag_live_')).toBe(true);
    expect(bs58.decode(key.slice(AGENT_KEY_PREFIX.length))).toHaveLength(32);
    expect(generateKey(USER_KEY_PREFIX).startsWith('uk_live_')).toBe(true);
  });

  it('never generates the same key twice', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateKey(AGENT_KEY_PREFIX)));
    expect(keys.size).toBe(1000);
  });

  it('keeps the stored forms: a key hash and an idempotency fingerprint are the SHA-256 hex they always were', () => {
    // Stored key hashes and the fingerprints of idempotency records already written must still match.
    expect(hashKey('ag_live_test')).toBe('2d330ee53ff0676aabb7f78582e01096cbcb0e91ae019d18db4c2564122f1b1d');
    expect(fingerprint({ userId: 'u1', description: 'café ☕', currency: 'USD', amount: 125 })).toBe(
      '7641ad775d6d12e7db4888ae1e58f09c03cb22da5a9cf4e030730b4ba1dfdbfe',
    );
  });

  it('hashes with SHA-256 (hex) and the hash does not contain the key', () => {
    const key = generateKey(AGENT_KEY_PREFIX);
    const hash = hashKey(key);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).toBe(hashKey(key));
    expect(hash).not.toContain(key.slice(AGENT_KEY_PREFIX.length, 16));
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('shape-checks keys before any lookup', () => {
    expect(looksLikeKey(generateKey(AGENT_KEY_PREFIX), AGENT_KEY_PREFIX)).toBe(true);
    expect(looksLikeKey(undefined, AGENT_KEY_PREFIX)).toBe(false);
    expect(looksLikeKey('uk_live_abc', AGENT_KEY_PREFIX)).toBe(false);
    expect(looksLikeKey('ag_live_ with space', AGENT_KEY_PREFIX)).toBe(false);
    expect(looksLikeKey(`ag_live_${'x'.repeat(200)}`, AGENT_KEY_PREFIX)).toBe(false);
  });

  it('compares secrets of any length', () => {
    expect(secretsEqual('same-secret', 'same-secret')).toBe(true);
    expect(secretsEqual('same-secret', 'same-secreT')).toBe(false);
    expect(secretsEqual('short', 'a much longer secret')).toBe(false);
  });
});
