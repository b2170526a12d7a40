import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import bs58 from 'bs58';

export const AGENT_KEY_PREFIX = 'ag_live_';
export const USER_KEY_PREFIX = 'uk_live_';
/** A grant key (docs/grants.md): one agent's scoped charge credential, never an account key. */
export const GRANT_KEY_PREFIX = 'ug_live_';

/** A new secret: prefix + base58 of 32 random bytes (256 bits). Shown once, stored only hashed. */
export function generateKey(prefix: string): string {
  return prefix + bs58.encode(randomBytes(32));
}

/** SHA-256 hex of a key: the only form in which a key is stored or used as a lookup key. */
export function hashKey(key: string): string {
  // One-shot: a quarter of createHash's cost for a key this short (every authenticated request hashes one or two).
  return hash('sha256', key, 'hex');
}

/** Cheap shape check before any lookup, so garbage never reaches the table. */
export function looksLikeKey(value: string | undefined, prefix: string): value is string {
  return typeof value === 'string' && value.startsWith(prefix) && value.length <= 128 && /^[\x21-\x7e]+$/.test(value);
}

/** Constant-time comparison of two secrets of any length (compares their digests). */
export function secretsEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
}
