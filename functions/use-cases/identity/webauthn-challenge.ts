/**
 * WebAuthn challenges that are stored nowhere until they are answered (DESIGN §24: unauthenticated
 * requests write nothing). A challenge is the bytes `version ‖ mac ‖ claims`: the claims (what the
 * ceremony is for, until when, a random nonce, and for a signed-in ceremony the payer and a digest
 * of the session) as JSON, and mac = HMAC-SHA256 under a key derived from the server secret (the
 * approval secret, use-cases/charges/approval-token.ts `derivedSecret`). The page carries it: the options
 * hand it to the browser, the authenticator signs over it in clientDataJSON, the answer brings it
 * back. Opening one checks the mac (constant time), the purpose, the binding and the 5-minute
 * expiry; spending it records its SHA-256 once (a conditional Put, store/identity/passkey.repository.ts
 * `spendChallenge`), before anything else is verified, so an answer is accepted at most once even
 * when it is refused. A copy of the table mints no challenge: the key is not in it.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { refuse } from '../../messages/refusal';
import { spendChallenge } from '../../store/identity/passkey.repository';
import { derivedSecret } from '../charges/approval-token';

/** A challenge lives this long (DESIGN §21); the browser's own timeout is the same. */
export const CHALLENGE_TTL_MS = 5 * 60_000;

/** What a challenge is for: sign-up, sign-in, the proof before adding a passkey, the new passkey's registration. */
export type ChallengePurpose = 'signup' | 'login' | 'proof' | 'add';

/** What a challenge says, signed: the ceremony's own facts travel with it rather than in the table. */
export interface ChallengeClaims {
  purpose: ChallengePurpose;
  /** Epoch ms. */
  expiresAt: number;
  /** `proof`, `add`: the signed-in payer. */
  userId?: string;
  /** `proof`, `add`: a digest of the session that asked (another session, even the payer's, cannot answer it). */
  session?: string;
  /** `signup`, `add`: the name the payer gave. */
  name?: string;
  /** `add`: how the new passkey is being added (the proof that was given), and whether the account key stands behind it. */
  addedBy?: { kind: 'accountKey' } | { kind: 'passkey'; credentialId: string; name: string };
  fromAccountKey?: boolean;
}

const VERSION = 1;
const MAC_BYTES = 32;
/** The longest challenge (base64url) an answer may carry: names and ids included, with room. */
export const CHALLENGE_MAX_LENGTH = 2_048;

const key = () => derivedSecret('console:webauthn-challenge:v1');
const macOf = (secret: Buffer, body: Buffer) => createHmac('sha256', secret).update(body).digest();

/** A session's binding in a challenge: a digest of its hash (the hash itself stays on the server). */
export const sessionBinding = (sessionHash: string): string =>
  createHash('sha256').update(`console-session:${sessionHash}`).digest().subarray(0, 16).toString('base64url');

/** A new challenge for `claims` (its expiry set here), as the bytes the WebAuthn options take. */
export async function issueChallenge(claims: Omit<ChallengeClaims, 'expiresAt'>, now: Date): Promise<Uint8Array<ArrayBuffer>> {
  const full: ChallengeClaims & { nonce: string } = {
    ...claims,
    expiresAt: now.getTime() + CHALLENGE_TTL_MS,
    nonce: randomBytes(16).toString('base64url'),
  };
  const body = Buffer.concat([Buffer.from([VERSION]), Buffer.from(JSON.stringify(full), 'utf8')]);
  const mac = macOf(await key(), body);
  const bytes = Buffer.concat([body.subarray(0, 1), mac, body.subarray(1)]);
  const out = new Uint8Array(bytes.length);
  out.set(bytes);
  return out;
}

/**
 * The claims of `challenge` (base64url, as clientDataJSON carries it) when it is one of ours, for
 * `purpose`, unexpired and (for a signed-in ceremony) the payer's and this session's; else 401
 * `this passkey request has expired or was already used, try again`. Writes nothing.
 */
export async function openChallenge(
  challenge: string,
  purpose: ChallengePurpose,
  now: Date,
  bound?: { userId: string; sessionHash: string },
): Promise<ChallengeClaims> {
  const gone = () => refuse('passkeyChallengeGone');
  if (challenge.length > CHALLENGE_MAX_LENGTH || !/^[A-Za-z0-9_-]+$/.test(challenge)) throw gone();
  const bytes = Buffer.from(challenge, 'base64url');
  // One spelling per challenge: base64url has others for the same bytes (the last character's spare bits).
  if (bytes.toString('base64url') !== challenge || bytes.length <= 1 + MAC_BYTES || bytes[0] !== VERSION) throw gone();
  const given = bytes.subarray(1, 1 + MAC_BYTES);
  const body = Buffer.concat([bytes.subarray(0, 1), bytes.subarray(1 + MAC_BYTES)]);
  if (!timingSafeEqual(given, macOf(await key(), body))) throw gone();
  let claims: ChallengeClaims;
  try {
    claims = JSON.parse(body.subarray(1).toString('utf8')) as ChallengeClaims;
  } catch {
    throw gone();
  }
  if (claims.purpose !== purpose || typeof claims.expiresAt !== 'number' || now.getTime() >= claims.expiresAt) throw gone();
  if (bound && (claims.userId !== bound.userId || claims.session !== sessionBinding(bound.sessionHash))) throw gone();
  return claims;
}

/**
 * Opens `challenge` and spends it: recorded once, before anything of the answer is verified, so a
 * second answer to it is refused (401, as an unknown one), even after the first was refused.
 */
export async function spendOpenedChallenge(
  challenge: string,
  purpose: ChallengePurpose,
  now: Date,
  bound?: { userId: string; sessionHash: string },
): Promise<ChallengeClaims> {
  const claims = await openChallenge(challenge, purpose, now, bound);
  const digest = createHash('sha256').update(challenge).digest('base64url');
  if (!(await spendChallenge(digest, claims.expiresAt))) throw refuse('passkeyChallengeGone');
  return claims;
}
