/**
 * The WebAuthn ceremony's parts that every passkey flow shares (use-cases/identity/passkeys.ts): the relying
 * party, the challenge a response answers and its spending (once, before anything is verified),
 * the options of a registration, the library's verification of a registration or an assertion, and
 * the passkey as stored and as shown. Apart from the flows so each file stays one job.
 */
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { generateRegistrationOptions, verifyAuthenticationResponse, verifyRegistrationResponse } from '@simplewebauthn/server';
import type { ListedPasskey, PasskeyOrigin } from '../../core/passkeys';
import { refuse } from '../../messages/refusal';
import type { Passkey } from '../../store/identity/passkey.repository';
import {
  CHALLENGE_MAX_LENGTH,
  CHALLENGE_TTL_MS,
  type ChallengeClaims,
  type ChallengePurpose,
  spendOpenedChallenge,
} from './webauthn-challenge';

/** A passkey's name: what the payer typed, at most this long. */
export const PASSKEY_NAME_MAX = 64;

/** The relying party: the host of the public base URL, and its origin (PUBLIC_BASE_URL). */
export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

const base64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/** A name as the payer typed it: trimmed, control characters out, at most PASSKEY_NAME_MAX characters. */
export function passkeyName(given: unknown): string {
  if (typeof given !== 'string') return '';
  return given
    .replace(/[\u0000-\u001f\u007f]/g, ' ')
    .trim()
    .slice(0, PASSKEY_NAME_MAX);
}

/** The challenge a response answers, from its clientDataJSON; the library checks it against ours again. */
export function challengeOf(response: { response?: { clientDataJSON?: unknown } } | undefined): string {
  const encoded = response?.response?.clientDataJSON;
  if (typeof encoded !== 'string' || encoded.length > 2 * CHALLENGE_MAX_LENGTH + 1024) throw refuse('invalidPasskeyResponse');
  try {
    const parsed = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as { challenge?: unknown };
    if (
      typeof parsed.challenge === 'string' &&
      /^[A-Za-z0-9_-]{16,}$/.test(parsed.challenge) &&
      parsed.challenge.length <= CHALLENGE_MAX_LENGTH
    ) {
      return parsed.challenge;
    }
  } catch {
    // Falls through to the refusal.
  }
  throw refuse('invalidPasskeyResponse');
}

/** Spends the response's challenge for this ceremony: at most once, even by a refusal. */
export async function spendFor(
  purpose: ChallengePurpose,
  response: { response?: { clientDataJSON?: unknown } } | undefined,
  now: Date,
  bound?: { userId: string; sessionHash: string },
): Promise<{ challenge: string; claims: ChallengeClaims }> {
  const challenge = challengeOf(response);
  return { challenge, claims: await spendOpenedChallenge(challenge, purpose, now, bound) };
}

export const registration = (rp: RelyingParty, userName: string, exclude: string[], challenge: Uint8Array<ArrayBuffer>) =>
  generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName,
    userDisplayName: userName,
    challenge,
    timeout: CHALLENGE_TTL_MS,
    attestationType: 'none',
    excludeCredentials: exclude.map((id) => ({ id })),
    // A discoverable credential (sign-in asks for no name) that verifies its user (PIN, biometrics).
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
  });

export async function verifiedRegistration(rp: RelyingParty, response: RegistrationResponseJSON, challenge: string) {
  try {
    const verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
    });
    if (verified.verified) return verified.registrationInfo.credential;
  } catch {
    // The library's reason stays here: the payer is told the passkey was not accepted.
  }
  throw refuse('passkeyNotAccepted');
}

/** An assertion by `passkey` over `challenge`, verified: the new counter. 401 `this passkey was not accepted` otherwise. */
export async function verifiedAssertion(rp: RelyingParty, response: AuthenticationResponseJSON, challenge: string, passkey: Passkey) {
  try {
    const verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      credential: {
        id: passkey.credentialId,
        publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')),
        counter: passkey.counter,
        transports: passkey.transports as never,
      },
    });
    if (verified.verified) return verified.authenticationInfo.newCounter;
  } catch {
    // Falls through to the refusal.
  }
  throw refuse('passkeyNotAccepted');
}

/** The passkey as stored, from a registration the library verified (sign-up's first passkey and every added one). */
export function passkeyOf(
  credential: Awaited<ReturnType<typeof verifiedRegistration>>,
  userId: string,
  now: Date,
  origin: { name: string; addedBy: PasskeyOrigin; fromAccountKey: boolean },
): Passkey {
  return {
    credentialId: credential.id,
    userId,
    publicKey: base64url(credential.publicKey),
    counter: credential.counter,
    transports: credential.transports ?? [],
    createdAt: now.toISOString(),
    ...origin,
  };
}

/** The passkey as the Security page, the rotation answer and `user.passkey.added` show it (never its key material). */
export function passkeyView(p: Pick<ListedPasskey, 'credentialId' | 'createdAt' | 'name' | 'addedBy'>) {
  return {
    credentialId: p.credentialId,
    name: p.name ?? null,
    createdAt: p.createdAt,
    addedWith: p.addedBy
      ? p.addedBy.kind === 'passkey'
        ? { kind: 'passkey' as const, credentialId: p.addedBy.credentialId, name: p.addedBy.name }
        : { kind: p.addedBy.kind }
      : null,
  };
}
