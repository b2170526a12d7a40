/**
 * The admin key: ADMIN_KEY locally and in tests. On AWS the key lives in Secrets Manager
 * (ADMIN_KEY_SECRET_ARN); each container re-reads it at most every ADMIN_KEY_REFRESH_MS, so a
 * rotated key takes effect within that time without redeploying (docs/operating/runbooks.md, "Rotating the admin key").
 */
import { config, configSlot } from '../config';

export const ADMIN_KEY_REFRESH_MS = 5 * 60_000;

/** Per configuration (configSlot): a function not given the key never finds another's. */
let cached = configSlot<{ value: Promise<string>; expires: number }>();

export function adminKey(now = Date.now()): Promise<string> {
  const known = cached.get();
  if (known && known.expires > now) return known.value;
  const value = load();
  const entry = { value, expires: now + ADMIN_KEY_REFRESH_MS };
  const slot = cached;
  slot.set(entry);
  value.catch(() => {
    if (slot.get() === entry) slot.set(undefined); // let the next request try again
  });
  return value;
}

async function load(): Promise<string> {
  const cfg = config();
  if (cfg.ADMIN_KEY) return cfg.ADMIN_KEY;
  if (cfg.ADMIN_KEY_SECRET_ARN) {
    const { readSecretString } = await import('../store/secrets');
    return (await readSecretString(cfg.ADMIN_KEY_SECRET_ARN)).trim();
  }
  throw new Error('no admin key configured: set ADMIN_KEY or ADMIN_KEY_SECRET_ARN');
}

/** Forgets the key, as a new container would (the benchmarks' cold requests); resetForTests does too (a new configuration). */
export function resetAdminKey(): void {
  cached = configSlot();
}
