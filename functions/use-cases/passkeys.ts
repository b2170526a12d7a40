/**
 * Passkeys (DESIGN §21, docs/console.md), with @simplewebauthn/server doing the WebAuthn checks
 * (attestation, signature, origin, RP id, user verification, counter). What is ours: challenges
 * are single use (the ceremony deletes the one it names before it verifies anything) and live 5
 * minutes; a passkey is found by its credential id alone (discoverable: no user name asked); the
 * counter is written conditioned on the one verified, so one signature cannot sign in twice.
 */
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { config } from '../config';
import { PasskeyTakenError } from '../core/errors';
import { refusalText } from '../messages/catalogue';
import { refuse } from '../messages/refusal';
import {
  deletePasskey,
  getPasskey,
  listPasskeys,
  type Passkey,
  type PasskeyList,
  passkeyItems,
  recordPasskeyUse,
  type StoredChallenge,
  saveChallenge,
  savePasskey,
  takeChallenge,
} from '../store/passkey.repository';
import { countFailedSignIn, countSignUp, refuseIfSignInsBlocked, sessionOfNewPayer, startSession } from './console-sessions';
import { createUserWithKey } from './users';

/** A challenge lives this long (DESIGN §21); the browser's own timeout is the same. */
export const CHALLENGE_TTL_MS = 5 * 60_000;

export const PASSKEY_MESSAGES = {
  signUpClosed: refusalText('signUpClosed'),
  challengeGone: refusalText('passkeyChallengeGone'),
  notAccepted: refusalText('passkeyNotAccepted'),
  unknownPasskey: refusalText('passkeyUnknown'),
  passkeyNotFound: refusalText('passkeyNotFound'),
  lastPasskey: refusalText('lastPasskey'),
} as const;

/** The relying party: the host of the public base URL, and its origin (PUBLIC_BASE_URL). */
export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

const base64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

/** The challenge a response answers, from its clientDataJSON; the library checks it against ours again. */
function challengeOf(response: { response?: { clientDataJSON?: unknown } }): string {
  const encoded = response.response?.clientDataJSON;
  if (typeof encoded !== 'string' || encoded.length > 4096) throw refuse('invalidPasskeyResponse');
  try {
    const parsed = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as { challenge?: unknown };
    if (typeof parsed.challenge === 'string' && /^[A-Za-z0-9_-]{16,128}$/.test(parsed.challenge)) return parsed.challenge;
  } catch {
    // Falls through to the refusal.
  }
  throw refuse('invalidPasskeyResponse');
}

/** Takes the response's challenge for this ceremony: deleted first, so it is used at most once, even by a refusal. */
async function takeFor(purpose: StoredChallenge['purpose'], challenge: string, now: Date): Promise<StoredChallenge> {
  const stored = await takeChallenge(challenge);
  if (!stored || stored.purpose !== purpose || now.getTime() >= stored.expiresAt) throw refuse('passkeyChallengeGone');
  return stored;
}

const registration = (rp: RelyingParty, userName: string, exclude: string[]) =>
  generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName,
    userDisplayName: userName,
    timeout: CHALLENGE_TTL_MS,
    attestationType: 'none',
    excludeCredentials: exclude.map((id) => ({ id })),
    // A discoverable credential (sign-in asks for no name) that verifies its user (PIN, biometrics).
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
  });

async function verifiedRegistration(rp: RelyingParty, response: RegistrationResponseJSON, challenge: string) {
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

/** The passkey as stored, from a registration the library verified (sign-up's first passkey and every added one). */
function passkeyOf(credential: Awaited<ReturnType<typeof verifiedRegistration>>, userId: string, now: Date): Passkey {
  return {
    credentialId: credential.id,
    userId,
    publicKey: base64url(credential.publicKey),
    counter: credential.counter,
    transports: credential.transports ?? [],
    createdAt: now.toISOString(),
  };
}

/** Step 1 of sign-up: the options for the browser (and a challenge). 403 when sign-up is closed; 429 past the address's sign-ups. */
export async function signUpOptions(
  rp: RelyingParty,
  name: string,
  address: string,
  now: Date,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  if (config().CONSOLE_SIGNUP === 'closed') throw refuse('signUpClosed');
  await countSignUp(address, now);
  const options = await registration(rp, name || 'Payer', []);
  await saveChallenge(options.challenge, { purpose: 'signup', expiresAt: now.getTime() + CHALLENGE_TTL_MS, ...(name ? { name } : {}) });
  return options;
}

/**
 * Step 2 of sign-up: the new passkey verified, the payer created as the operator's create-user
 * creates one (balances 0, an account key shown once), the passkey saved, a session started that
 * holds the account key until /console/welcome has shown it. The payer, its key, its passkey and
 * its session are one transaction: a failure anywhere leaves no payer behind without a way in (the
 * challenge is spent, so the browser starts the ceremony again).
 */
export async function finishSignUp(rp: RelyingParty, response: RegistrationResponseJSON, now: Date) {
  if (config().CONSOLE_SIGNUP === 'closed') throw refuse('signUpClosed');
  const challenge = challengeOf(response);
  await takeFor('signup', challenge, now);
  const credential = await verifiedRegistration(rp, response, challenge);
  let started: ReturnType<typeof sessionOfNewPayer> | undefined;
  try {
    await createUserWithKey({
      also: ({ userId, userKey }) => {
        started = sessionOfNewPayer(userId, now, { welcomeKey: userKey });
        const passkey = passkeyItems(passkeyOf(credential, userId, now));
        return [...passkey, ...started.items];
      },
    });
  } catch (error) {
    // Another payer's credential id (only a crafted or replayed registration has one): nothing was written.
    if (error instanceof PasskeyTakenError) throw refuse('passkeyNotAccepted');
    throw error;
  }
  if (!started) throw new Error('sign-up: the user was created without its session');
  return { cookieValue: started.cookieValue, session: started.session };
}

/** Step 1 of a passkey sign-in: options with no credentials listed (the authenticator offers its own). */
export async function signInOptions(rp: RelyingParty, address: string, now: Date): Promise<PublicKeyCredentialRequestOptionsJSON> {
  await refuseIfSignInsBlocked(address, now);
  const options = await generateAuthenticationOptions({ rpID: rp.id, userVerification: 'required', timeout: CHALLENGE_TTL_MS });
  await saveChallenge(options.challenge, { purpose: 'login', expiresAt: now.getTime() + CHALLENGE_TTL_MS });
  return options;
}

/** Step 2 of a passkey sign-in: the assertion verified against the stored passkey, its counter moved on, a session started. */
export async function finishSignIn(rp: RelyingParty, response: AuthenticationResponseJSON, address: string, now: Date) {
  await refuseIfSignInsBlocked(address, now);
  const challenge = challengeOf(response);
  await takeFor('login', challenge, now);
  const passkey = typeof response.id === 'string' && response.id.length <= 1024 ? await getPasskey(response.id) : undefined;
  if (!passkey) {
    await countFailedSignIn(address, now);
    throw refuse('passkeyUnknown');
  }
  let newCounter: number;
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
    if (!verified.verified) throw new Error('not verified');
    newCounter = verified.authenticationInfo.newCounter;
  } catch {
    await countFailedSignIn(address, now);
    throw refuse('passkeyNotAccepted');
  }
  // The counter moved meanwhile: another sign-in used this very state first (a cloned authenticator, or a replay).
  if (!(await recordPasskeyUse(passkey, newCounter, now))) throw refuse('passkeyNotAccepted');
  return startSession(passkey.userId, now);
}

export const passkeysOf = (userId: string): Promise<PasskeyList> => listPasskeys(userId);

/** A signed-in payer adds another passkey: step 1, its existing ones excluded. */
export async function addPasskeyOptions(rp: RelyingParty, userId: string, now: Date): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { passkeys } = await listPasskeys(userId);
  const options = await registration(
    rp,
    'Payer',
    passkeys.map((p) => p.credentialId),
  );
  await saveChallenge(options.challenge, { purpose: 'add', userId, expiresAt: now.getTime() + CHALLENGE_TTL_MS });
  return options;
}

/** Step 2: verified, and saved for this payer only (the challenge names who asked for it). */
export async function finishAddPasskey(rp: RelyingParty, userId: string, response: RegistrationResponseJSON, now: Date): Promise<void> {
  const challenge = challengeOf(response);
  const stored = await takeFor('add', challenge, now);
  if (stored.userId !== userId) throw refuse('passkeyChallengeGone');
  const credential = await verifiedRegistration(rp, response, challenge);
  try {
    await savePasskey(passkeyOf(credential, userId, now));
  } catch (error) {
    if (error instanceof PasskeyTakenError) throw refuse('passkeyNotAccepted');
    throw error;
  }
}

/**
 * Removes one of the payer's passkeys. The last one stays while the payer has never signed in with
 * the account key (409): without it they could be left with no way in that they know works.
 */
export async function removePasskey(userId: string, credentialId: string): Promise<void> {
  const list = await listPasskeys(userId);
  if (!list.passkeys.some((p) => p.credentialId === credentialId)) throw refuse('passkeyNotFound');
  if (list.passkeys.length === 1 && list.accountKeySignInAt === undefined) throw refuse('lastPasskey');
  if (!(await deletePasskey(userId, credentialId))) throw refuse('passkeyNotFound');
}
