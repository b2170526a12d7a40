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

/**
 * 256 bits derived from the approval secret for `label` (the consent link of a grant request, the
 * grant key its payer allowed: use-cases/grant-requests.ts). Nothing derived here is stored: a copy
 * of the table alone derives nothing.
 */
export async function derivedSecret(label: string): Promise<Buffer> {
  return createHmac('sha256', await approvalSecret())
    .update(label)
    .digest();
}

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

/**
 * `body` with the placeholder in its LAST place replaced by the token: `approvalUrl` is the last
 * field written (the answer's, and the event data's, the data being the envelope's last field),
 * so a description that happens to contain the placeholder text stays as it was.
 */
function fillLast(body: string, token: string): string {
  const at = body.lastIndexOf(TOKEN_PLACEHOLDER);
  return at < 0 ? body : body.slice(0, at) + token + body.slice(at + TOKEN_PLACEHOLDER.length);
}

/** A stored answer with its approval link's token filled in again. */
export async function withApprovalToken(storedBody: string): Promise<string> {
  if (!storedBody.includes(TOKEN_PLACEHOLDER)) return storedBody;
  const { id } = JSON.parse(storedBody) as { id: string };
  return fillLast(storedBody, await approvalToken(id));
}

/**
 * A `charge.approval_requested` event body (store/outbox.ts: stored with the placeholder) with its
 * approval link's token filled in, just before the delivery worker signs and sends it. Other
 * bodies are returned as they are. The result is checked: its `data.approvalUrl` ends with the token.
 */
export async function eventWithApprovalToken(type: string, body: string): Promise<string> {
  if (type !== 'charge.approval_requested' || !body.includes(TOKEN_PLACEHOLDER)) return body;
  const { data } = JSON.parse(body) as { data: { id: string; approvalUrl?: string | null } };
  const token = await approvalToken(data.id);
  const filled = fillLast(body, token);
  const url = (JSON.parse(filled) as { data: { approvalUrl?: string | null } }).data.approvalUrl;
  if (typeof url !== 'string' || !url.endsWith(`/${token}`)) throw new Error(`event for charge ${data.id}: no approval link to fill in`);
  return filled;
}
