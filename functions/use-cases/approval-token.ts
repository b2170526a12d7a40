/**
 * The approval link's capability: `<chargeId>.<mac>`, where mac = HMAC-SHA256 of the charge id
 * under the service's approval secret (APPROVAL_SECRET locally, APPROVAL_SECRET_ARN on AWS),
 * base64url. 256 unguessable bits scoped to one charge; nothing of it is stored, not even in the
 * idempotency record (the stored 202 keeps a placeholder that a replay fills in again), so a copy
 * of the table approves nothing. Single use: once the charge leaves PENDING the link only shows
 * the final state.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { config, onConfigReset } from '../config';
import { isId } from '../core/ids';

/** Stands for the token in a stored answer; a replay puts the token back (`withApprovalToken`). */
export const TOKEN_PLACEHOLDER = '{approvalToken}';

let secret: Promise<string> | undefined;
onConfigReset(() => {
  secret = undefined;
});

function approvalSecret(): Promise<string> {
  secret ??= (async () => {
    const cfg = config();
    if (cfg.APPROVAL_SECRET) return cfg.APPROVAL_SECRET;
    if (cfg.APPROVAL_SECRET_ARN) {
      const { readSecretString } = await import('../store/secrets');
      return (await readSecretString(cfg.APPROVAL_SECRET_ARN)).trim();
    }
    throw new Error('no approval secret configured: set APPROVAL_SECRET or APPROVAL_SECRET_ARN');
  })();
  secret.catch(() => {
    secret = undefined;
  });
  return secret;
}

const mac = (key: string, chargeId: string) => createHmac('sha256', key).update(`approval:${chargeId}`).digest();

/** The token for a charge's approval link. */
export async function approvalToken(chargeId: string): Promise<string> {
  return `${chargeId}.${mac(await approvalSecret(), chargeId).toString('base64url')}`;
}

/** The charge a token is for, or undefined when it is not one of ours (compared in constant time). */
export async function chargeOfToken(token: string): Promise<string | undefined> {
  const [chargeId, given, ...rest] = token.split('.');
  if (rest.length > 0 || !isId('charge', chargeId) || !given) return undefined;
  const expected = mac(await approvalSecret(), chargeId);
  const actual = Buffer.from(given, 'base64url');
  return actual.length === expected.length && timingSafeEqual(actual, expected) ? chargeId : undefined;
}

/** A stored answer with its approval link's token filled in again. */
export async function withApprovalToken(storedBody: string): Promise<string> {
  if (!storedBody.includes(TOKEN_PLACEHOLDER)) return storedBody;
  const { id } = JSON.parse(storedBody) as { id: string };
  return storedBody.replace(TOKEN_PLACEHOLDER, await approvalToken(id));
}
