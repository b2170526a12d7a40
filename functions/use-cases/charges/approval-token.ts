/**
 * The approval link's capability: `<chargeId>.<mac>`, where mac = HMAC-SHA256 of the charge id
 * under the service's approval secret (APPROVAL_SECRET locally, APPROVAL_SECRET_ARN on AWS),
 * base64url. 256 unguessable bits scoped to one charge; nothing of it is stored, not even in the
 * idempotency record (the stored 202's `approvalUrl` field keeps a placeholder that a replay puts
 * the token into again, by that field alone), so a copy of the table approves nothing. Single use:
 * once the charge leaves PENDING the link only shows the final state.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { parse } from 'lossless-json';
import { config, configSlot } from '../../config';
import { serialize } from '../../contracts/json';
import { isId } from '../../core/ids';

/** Stands for the token in a stored answer's `approvalUrl`; a replay puts the token back there (`withApprovalToken`). */
export const TOKEN_PLACEHOLDER = '{approvalToken}';

/** Read once per configuration (configSlot): a function not given the secret never finds another's. */
const secret = configSlot<Promise<string>>();

function approvalSecret(): Promise<string> {
  const known = secret.get();
  if (known) return known;
  const cfg = config();
  const reading = (async () => {
    if (cfg.APPROVAL_SECRET) return cfg.APPROVAL_SECRET;
    if (cfg.APPROVAL_SECRET_ARN) {
      const { readSecretString } = await import('../../store/secrets');
      return (await readSecretString(cfg.APPROVAL_SECRET_ARN)).trim();
    }
    throw new Error('no approval secret configured: set APPROVAL_SECRET or APPROVAL_SECRET_ARN');
  })();
  secret.set(reading);
  reading.catch(() => {
    if (secret.get() === reading) secret.set(undefined);
  });
  return reading;
}

const mac = (key: string, chargeId: string) => createHmac('sha256', key).update(`approval:${chargeId}`).digest();

/**
 * 256 bits derived from the approval secret for `label` (the consent link of a grant request, the
 * grant key its payer allowed: use-cases/identity/grant-requests.ts). Nothing derived here is stored: a copy
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

/** How the service's own link ends while its token is not filled in (the rest is `<base>`). */
const UNFILLED_LINK_END = `/approve/${TOKEN_PLACEHOLDER}`;

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * `view` (a Charge as an answer or an event shows it) with the token put into its `approvalUrl`
 * field, by that field alone: only when the field is the service's own unfilled link, and the token
 * is the one of the view's own charge id. No other field is looked at, so nothing an agent or a
 * payer wrote (a description, an agent name) is ever a template. Undefined: nothing to fill in.
 */
async function fillLinkField(view: unknown): Promise<Record<string, unknown> | undefined> {
  if (!isObject(view) || typeof view.approvalUrl !== 'string' || !view.approvalUrl.endsWith(UNFILLED_LINK_END)) return undefined;
  if (typeof view.id !== 'string' || !isId('charge', view.id)) return undefined;
  const base = view.approvalUrl.slice(0, -TOKEN_PLACEHOLDER.length);
  return { ...view, approvalUrl: base + (await approvalToken(view.id)) };
}

/**
 * A stored answer with its approval link's token filled in again. Parsed and written again with
 * the API's own exact JSON (numbers keep their literal text, fields their order), so the replay is
 * byte for byte the first answer; a body without the service's unfilled link (a grant key's 202
 * has `approvalUrl: null`) is returned as it was stored.
 */
export async function withApprovalToken(storedBody: string): Promise<string> {
  if (!storedBody.includes(UNFILLED_LINK_END)) return storedBody;
  const filled = await fillLinkField(parse(storedBody));
  return filled ? serialize(filled) : storedBody;
}

/**
 * A `charge.approval_requested` event body (store/events/outbox.ts: stored with the link unfilled) with
 * the token put into `data.approvalUrl`, just before the delivery worker signs and sends it. Other
 * bodies, and any other field, are returned as they are.
 */
export async function eventWithApprovalToken(type: string, body: string): Promise<string> {
  if (type !== 'charge.approval_requested' || !body.includes(UNFILLED_LINK_END)) return body;
  const event = parse(body);
  if (!isObject(event) || event.type !== 'charge.approval_requested') return body;
  const data = await fillLinkField(event.data);
  return data ? serialize({ ...event, data }) : body;
}
