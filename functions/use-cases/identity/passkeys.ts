/**
 * Passkeys (DESIGN §21, §24, docs/console.md), with @simplewebauthn/server doing the WebAuthn checks
 * (attestation, signature, origin, RP id, user verification, counter). What is ours:
 * - challenges are stateless until answered (use-cases/identity/webauthn-challenge.ts): HMAC-bound, 5
 *   minutes, carried by the page; the answer spends one once, before anything else is verified;
 * - a passkey is found by its credential id alone (discoverable: no user name asked); the counter is
 *   written conditioned on the one verified, so one signature cannot be used twice;
 * - adding a passkey needs a fresh proof (DESIGN §24): in a session a passkey opened, an assertion by
 *   one of the payer's passkeys made for this purpose; in a session the account key opened, the key
 *   typed again. Each passkey records its name, when and how it was added, and whether the account
 *   key stands behind it (added from a key-opened session, or vouched for by a passkey that was):
 *   a rotation of the key removes those (use-cases/identity/account-key.ts). Each added passkey tells the
 *   payer's webhooks `user.passkey.added`, in the transaction that saves it;
 * - removing a passkey ends the sessions it opened.
 */
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { generateAuthenticationOptions } from '@simplewebauthn/server';
import { config } from '../../config';
import { PasskeyGoneError, PasskeyTakenError, UserKeyRevokedError } from '../../core/errors';
import { newEventId, type OutboxEvent } from '../../core/events';
import { hashKey, looksLikeKey, USER_KEY_PREFIX } from '../../core/keys';
import type { PasskeyList, PasskeyOrigin } from '../../core/passkeys';
import { refusalText } from '../../messages/catalogue';
import { refuse } from '../../messages/refusal';
import { outboxPut } from '../../store/events/outbox';
import {
  deletePasskey,
  getPasskey,
  listPasskeys,
  passkeyCheck,
  passkeyItems,
  passkeyUseItem,
  recordPasskeyUse,
  savePasskey,
} from '../../store/identity/passkey.repository';
import { accountKeyCheck, getUserKeyHash } from '../../store/identity/user.repository';
import { named, type TransactEntry } from '../../store/transact';
import {
  countFailedSignIn,
  countSignUp,
  endSessionsOpenedBy,
  readSignUps,
  refuseIfSignInsBlocked,
  type Session,
  sessionOfNewPayer,
  startSession,
} from './console-sessions';
import { createUserWithKey } from './users';
import { CHALLENGE_TTL_MS, type ChallengeClaims, issueChallenge, sessionBinding } from './webauthn-challenge';

export { CHALLENGE_TTL_MS } from './webauthn-challenge';

export const PASSKEY_MESSAGES = {
  signUpClosed: refusalText('signUpClosed'),
  challengeGone: refusalText('passkeyChallengeGone'),
  notAccepted: refusalText('passkeyNotAccepted'),
  unknownPasskey: refusalText('passkeyUnknown'),
  passkeyNotFound: refusalText('passkeyNotFound'),
  lastPasskey: refusalText('lastPasskey'),
} as const;

import {
  passkeyName,
  passkeyOf,
  passkeyView,
  type RelyingParty,
  registration,
  spendFor,
  verifiedAssertion,
  verifiedRegistration,
} from './passkey-ceremony';

export { PASSKEY_NAME_MAX, passkeyName, passkeyView, type RelyingParty } from './passkey-ceremony';

/**
 * Step 1 of sign-up: the options for the browser (a challenge carried by the page, stored nowhere:
 * nothing is written). 403 when sign-up is closed; 429 once the address has signed up
 * SIGN_UPS_PER_HOUR times this hour (read only: a sign-up is counted when it completes).
 */
export async function signUpOptions(
  rp: RelyingParty,
  name: string,
  address: string,
  now: Date,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  if (config().CONSOLE_SIGNUP === 'closed') throw refuse('signUpClosed');
  await readSignUps(address, now);
  const given = passkeyName(name);
  const challenge = await issueChallenge({ purpose: 'signup', ...(given ? { name: given } : {}) }, now);
  return registration(rp, given || 'Payer', [], challenge);
}

/**
 * Step 2 of sign-up: the new passkey verified, the sign-up counted for the address (429 past the
 * hour's), the payer created as the operator's create-user creates one (balances 0, an account key
 * shown once), the passkey saved, a session started — opened by that passkey — that holds the
 * account key until /console/welcome has shown it. The payer, its key, its passkey and its session
 * are one transaction: a failure anywhere leaves no payer behind without a way in (the challenge is
 * spent, so the browser starts the ceremony again).
 */
export async function finishSignUp(rp: RelyingParty, response: RegistrationResponseJSON, address: string, now: Date) {
  if (config().CONSOLE_SIGNUP === 'closed') throw refuse('signUpClosed');
  const { challenge, claims } = await spendFor('signup', response, now);
  const credential = await verifiedRegistration(rp, response, challenge);
  await countSignUp(address, now);
  let started: ReturnType<typeof sessionOfNewPayer> | undefined;
  try {
    await createUserWithKey({
      also: ({ userId, userKey }) => {
        started = sessionOfNewPayer(userId, now, { welcomeKey: userKey, openedBy: { kind: 'passkey', credentialId: credential.id } });
        const origin = { name: claims.name || 'Sign-up passkey', addedBy: { kind: 'signup' as const }, fromAccountKey: false };
        const passkey = passkeyItems(passkeyOf(credential, userId, now, origin));
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

/** Step 1 of a passkey sign-in: options with no credentials listed (the authenticator offers its own). Writes nothing. */
export async function signInOptions(rp: RelyingParty, address: string, now: Date): Promise<PublicKeyCredentialRequestOptionsJSON> {
  await refuseIfSignInsBlocked(address, now);
  const challenge = await issueChallenge({ purpose: 'login' }, now);
  return generateAuthenticationOptions({ rpID: rp.id, userVerification: 'required', timeout: CHALLENGE_TTL_MS, challenge });
}

/**
 * Step 2 of a passkey sign-in: the assertion verified against the stored passkey, then the session
 * — opened by this passkey — written in one transaction with the counter moved on (conditioned on
 * the counter verified, and so on the passkey still being there: a removal or a rotation racing the
 * sign-in leaves no session behind).
 */
export async function finishSignIn(rp: RelyingParty, response: AuthenticationResponseJSON, address: string, now: Date) {
  await refuseIfSignInsBlocked(address, now);
  const { challenge } = await spendFor('login', response, now);
  const passkey = typeof response.id === 'string' && response.id.length <= 1024 ? await getPasskey(response.id) : undefined;
  if (!passkey) {
    await countFailedSignIn(address, now);
    throw refuse('passkeyUnknown');
  }
  let newCounter: number;
  try {
    newCounter = await verifiedAssertion(rp, response, challenge, passkey);
  } catch (error) {
    await countFailedSignIn(address, now);
    throw error;
  }
  try {
    return await startSession(passkey.userId, now, {
      openedBy: { kind: 'passkey', credentialId: passkey.credentialId },
      also: [passkeyUseItem(passkey, newCounter, now)],
    });
  } catch (error) {
    // The counter moved meanwhile (a cloned authenticator, or a replay), or the passkey was removed.
    if (error instanceof PasskeyGoneError) throw refuse('passkeyNotAccepted');
    throw error;
  }
}

export const passkeysOf = (userId: string): Promise<PasskeyList> => listPasskeys(userId);

type SignedIn = Pick<Session, 'userId' | 'hash' | 'openedBy'>;
const boundTo = (session: SignedIn) => ({ userId: session.userId, sessionHash: session.hash });

/**
 * Adding a passkey in a session a passkey opened, step 0: the options for an assertion by one of the
 * payer's passkeys, for this purpose and this session only (a sign-in's assertion, or another
 * session's, is not one). Writes nothing. 400 in a key-opened session: its proof is the key.
 */
export async function addPasskeyProofOptions(
  rp: RelyingParty,
  session: SignedIn,
  now: Date,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  if (session.openedBy.kind !== 'passkey') throw refuse('passkeyProofKeyRequired');
  const { passkeys } = await listPasskeys(session.userId);
  const challenge = await issueChallenge({ purpose: 'proof', userId: session.userId, session: sessionBinding(session.hash) }, now);
  return generateAuthenticationOptions({
    rpID: rp.id,
    userVerification: 'required',
    timeout: CHALLENGE_TTL_MS,
    challenge,
    allowCredentials: passkeys.map((p) => ({ id: p.credentialId })),
  });
}

/** The fresh proof a payer gives to add a passkey (DESIGN §24). */
export interface AddPasskeyProof {
  /** In a session the account key opened: the key, typed again. */
  accountKey?: unknown;
  /** In a session a passkey opened: the assertion answering `addPasskeyProofOptions`. */
  assertion?: unknown;
}

/**
 * Adding a passkey, step 1: the fresh proof checked, then the registration options — their
 * challenge carries how the passkey is being added (and whether the account key stands behind it),
 * for this session only. In a key-opened session the key typed must be the one that opened it and
 * still the payer's (a wrong one is 401 `invalid account key`, counted as a failed sign-in of the
 * address); in a passkey session the assertion must answer a proof challenge of this session, by a
 * passkey of this payer (its counter moves on, so it is used once).
 */
export async function addPasskeyOptions(
  rp: RelyingParty,
  session: SignedIn,
  proof: AddPasskeyProof,
  name: string,
  address: string,
  now: Date,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const { userId } = session;
  const list = await listPasskeys(userId);
  let addedBy: NonNullable<ChallengeClaims['addedBy']>;
  let fromAccountKey: boolean;
  if (session.openedBy.kind === 'accountKey') {
    if (proof.accountKey === undefined || proof.accountKey === '') throw refuse('passkeyProofKeyRequired');
    await refuseIfSignInsBlocked(address, now);
    const given = typeof proof.accountKey === 'string' ? proof.accountKey : undefined;
    const typed = looksLikeKey(given, USER_KEY_PREFIX) ? hashKey(given) : undefined;
    if (typed !== session.openedBy.keyHash || (await getUserKeyHash(userId)) !== typed) {
      await countFailedSignIn(address, now);
      throw refuse('consoleInvalidAccountKey');
    }
    addedBy = { kind: 'accountKey' };
    fromAccountKey = true;
  } else {
    if (typeof proof.assertion !== 'object' || proof.assertion === null) throw refuse('passkeyProofAssertionRequired');
    const assertion = proof.assertion as AuthenticationResponseJSON;
    const { challenge } = await spendFor('proof', assertion, now, boundTo(session));
    const prover = typeof assertion.id === 'string' && assertion.id.length <= 1024 ? await getPasskey(assertion.id) : undefined;
    if (!prover || prover.userId !== userId) throw refuse('passkeyNotAccepted');
    const newCounter = await verifiedAssertion(rp, assertion, challenge, prover);
    if (!(await recordPasskeyUse(prover, newCounter, now))) throw refuse('passkeyNotAccepted');
    // The account key stands behind the new passkey when it stands behind the one that vouches
    // for it, or behind the one that opened this session.
    const opener = list.passkeys.find((p) => session.openedBy.kind === 'passkey' && p.credentialId === session.openedBy.credentialId);
    addedBy = { kind: 'passkey', credentialId: prover.credentialId, name: prover.name ?? '' };
    fromAccountKey = prover.fromAccountKey || (opener?.fromAccountKey ?? true);
  }
  const given = passkeyName(name) || `Passkey ${list.passkeys.length + 1}`;
  const challenge = await issueChallenge(
    { purpose: 'add', userId, session: sessionBinding(session.hash), name: given, addedBy, fromAccountKey },
    now,
  );
  return registration(
    rp,
    given,
    list.passkeys.map((p) => p.credentialId),
    challenge,
  );
}

/**
 * Adding a passkey, step 2: the registration verified and saved for this payer, as its challenge
 * says it was proven, with `user.passkey.added` to the payer's webhooks in the same transaction.
 * The save is conditioned on the proof still standing: the key that opened a key session still the
 * payer's, the passkey that vouched (and the one that opened the session) still there — so a
 * rotation racing the ceremony cannot leave its passkey behind.
 */
export async function finishAddPasskey(rp: RelyingParty, session: SignedIn, response: RegistrationResponseJSON, now: Date) {
  if (typeof response !== 'object' || response === null) throw refuse('passkeyResponseMissing');
  const { challenge, claims } = await spendFor('add', response, now, boundTo(session));
  const credential = await verifiedRegistration(rp, response, challenge);
  const addedBy: PasskeyOrigin = claims.addedBy ?? { kind: 'accountKey' };
  const passkey = passkeyOf(credential, session.userId, now, {
    name: claims.name || 'Passkey',
    addedBy,
    fromAccountKey: claims.fromAccountKey !== false,
  });
  const conditions: TransactEntry[] = [];
  if (session.openedBy.kind === 'accountKey') {
    conditions.push(
      named(accountKeyCheck(session.userId, session.openedBy.keyHash), { onConditionFailed: () => new UserKeyRevokedError() }),
    );
  } else {
    conditions.push(passkeyCheck(session.userId, session.openedBy.credentialId));
    if (addedBy.kind === 'passkey' && addedBy.credentialId !== session.openedBy.credentialId) {
      conditions.push(passkeyCheck(session.userId, addedBy.credentialId));
    }
  }
  const event: OutboxEvent = {
    id: newEventId(now),
    type: 'user.passkey.added',
    createdAt: now.toISOString(),
    owner: { kind: 'user', id: session.userId },
    data: passkeyView(passkey),
  };
  const outbox = outboxPut([event], now);
  try {
    await savePasskey(passkey, [...conditions, ...(outbox ? [outbox] : [])]);
  } catch (error) {
    if (error instanceof PasskeyTakenError) throw refuse('passkeyNotAccepted');
    // What proved it is gone (a rotation, a removal): so is this session.
    if (error instanceof UserKeyRevokedError || error instanceof PasskeyGoneError) throw refuse('consoleSessionEnded');
    throw error;
  }
  return passkeyView(passkey);
}

/**
 * Removes one of the payer's passkeys, and ends the sessions it opened. The last one stays while
 * the payer has never signed in with the account key (409): without it they could be left with no
 * way in that they know works.
 */
export async function removePasskey(userId: string, credentialId: string): Promise<void> {
  const list = await listPasskeys(userId);
  if (!list.passkeys.some((p) => p.credentialId === credentialId)) throw refuse('passkeyNotFound');
  if (list.passkeys.length === 1 && list.accountKeySignInAt === undefined) throw refuse('lastPasskey');
  if (!(await deletePasskey(userId, credentialId))) throw refuse('passkeyNotFound');
  await endSessionsOpenedBy(userId, credentialId);
}
