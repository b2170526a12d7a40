/**
 * The admin key: ADMIN_KEY locally and in tests. On AWS the key lives in Secrets Manager
 * (ADMIN_KEY_SECRET_ARN) and is fetched once per container, then kept in memory.
 */
import { config } from '../config';

let cached: Promise<string> | undefined;

export function adminKey(): Promise<string> {
  if (!cached) {
    cached = load().catch((error) => {
      cached = undefined; // let the next request try again
      throw error;
    });
  }
  return cached;
}

async function load(): Promise<string> {
  const cfg = config();
  if (cfg.ADMIN_KEY) return cfg.ADMIN_KEY;
  if (cfg.ADMIN_KEY_SECRET_ARN) {
    const { readSecretString } = await import('../store/secrets');
    return readSecretString(cfg.ADMIN_KEY_SECRET_ARN);
  }
  throw new Error('no admin key configured: set ADMIN_KEY or ADMIN_KEY_SECRET_ARN');
}

export function resetAdminKey(): void {
  cached = undefined;
}
