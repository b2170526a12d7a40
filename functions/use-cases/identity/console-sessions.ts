/**
 * Console sessions (DESIGN §21, §24, docs/console.md): a session is a random 256-bit value in a
 * cookie, stored only as its hash with the payer's id, the session's CSRF token and what opened it
 * — a passkey (its credential id) or the account key (the key's hash). It ends after 30 minutes
 * without a request, 12 hours after it began whatever the activity, when the payer signs out (here
 * or everywhere), and when what opened it ends: rotating the account key ends every session of the
 * payer (use-cases/identity/account-key.ts), removing a passkey the sessions it opened (use-cases/identity/passkeys.ts)
 * — always on the server: an old cookie then finds nothing. A session is written conditioned on
 * its opener still being valid, and every state-changing request checks it again
 * (`confirmSession`), so no race with a rotation or a removal leaves one acting.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { UserKeyRevokedError } from '../../core/errors';
import { hashKey, looksLikeKey, USER_KEY_PREFIX } from '../../core/keys';
import { refusalText } from '../../messages/catalogue';
import { Refusal, refuse } from '../../messages/refusal';
import { countAttempt, type RateWindow, readAttempts, readWindow } from '../../store/identity/console-rate.repository';
import {
  createSession,
  deleteSession,
  getSession,
  listSessions,
  readSessions,
  type SessionOpener,
  type StoredSession,
  sessionItems,
  takeWelcomeKey,
  touchSession,
} from '../../store/identity/console-session.repository';
import { lookupCredentials } from '../../store/identity/credentials.repository';
import { getPasskey, markAccountKeySignIn } from '../../store/identity/passkey.repository';
import { accountKeyCheck, getUserKeyHash } from '../../store/identity/user.repository';
import { named, type TransactEntry, type TransactItem } from '../../store/transact';

export type { SessionOpener } from '../../store/identity/console-session.repository';

export const SESSION_IDLE_MS = 30 * 60_000;
export const SESSION_ABSOLUTE_MS = 12 * 3_600_000;
/**
 * Activity is written at most this often: a page costs no write when the session was touched
 * within the last five minutes (DESIGN §21: at most 3 requests a page). The idle timeout counts
 * from the last write, so a session may end up to this much earlier than 30 minutes after the
 * last request, never later.
 */
export const SESSION_TOUCH_EVERY_MS = 5 * 60_000;

/**
 * More failed sign-ins than this from one address in a minute → 429. Counted in fixed one-minute
 * windows, and judged on this window and the one before together: any 10 failures within a minute
 * lie in two adjacent windows, so they always block (a payer may wait up to two minutes, never
 * an attacker less than one).
 */
export const SIGN_IN_FAILURES_PER_MINUTE = 10;

export const CONSOLE_MESSAGES = {
  invalidAccountKey: refusalText('consoleInvalidAccountKey'),
  tooManySignIns: refusalText('tooManySignIns'),
  tooManySignUps: refusalText('tooManySignUps'),
} as const;

export interface Session extends StoredSession {
  /** The hash of the cookie's value: the session's key. */
  hash: string;
}

/** A session's cookie value: 32 random bytes, base64url (43 characters). */
const SESSION_VALUE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Starts a session for `userId`, opened by `openedBy`; the cookie value is returned once and never
 * stored. A key-opened session is written conditioned on the key's hash still being the payer's
 * (UserKeyRevokedError when a rotation won); `also` joins the transaction (a passkey sign-in's
 * counter update, which holds only while the passkey is there).
 */
export async function startSession(
  userId: string,
  now: Date,
  opts: { openedBy: SessionOpener; welcomeKey?: string; also?: readonly TransactEntry[] },
): Promise<{ cookieValue: string; session: Session }> {
  const { cookieValue, session, stored, idleEnd } = newSession(userId, now, opts);
  const opener =
    opts.openedBy.kind === 'accountKey'
      ? [named(accountKeyCheck(userId, opts.openedBy.keyHash), { onConditionFailed: () => new UserKeyRevokedError() })]
      : [];
  await createSession(session.hash, stored, idleEnd, [...opener, ...(opts.also ?? [])]);
  return { cookieValue, session };
}

/**
 * A session for a payer being created in the same transaction (a console sign-up): its items, and
 * what startSession would answer once they are written.
 */
export function sessionOfNewPayer(
  userId: string,
  now: Date,
  opts: { openedBy: SessionOpener; welcomeKey?: string },
): { cookieValue: string; session: Session; items: TransactItem[] } {
  const { cookieValue, session, stored, idleEnd } = newSession(userId, now, opts);
  return { cookieValue, session, items: sessionItems(session.hash, stored, idleEnd) };
}

function newSession(userId: string, now: Date, opts: { openedBy: SessionOpener; welcomeKey?: string }) {
  const cookieValue = randomBytes(32).toString('base64url');
  const at = now.getTime();
  const stored: StoredSession = {
    userId,
    csrfToken: randomBytes(32).toString('base64url'),
    createdAt: at,
    touchedAt: at,
    endsAt: at + SESSION_ABSOLUTE_MS,
    openedBy: opts.openedBy,
    ...(opts.welcomeKey ? { welcomeKey: opts.welcomeKey } : {}),
  };
  const hash = hashKey(cookieValue);
  return { cookieValue, stored, idleEnd: at + SESSION_IDLE_MS, session: { ...stored, hash } };
}

/**
 * The live session of a cookie's value, or undefined (no cookie, not ours, signed out, ended with
 * what opened it, idle for 30 minutes, older than 12 hours, or stored before sessions recorded
 * what opened them). One read; a write only when the last was five minutes ago or more. What
 * opened it is ended eagerly with its sessions (a rotation, a removal); a state-changing request
 * checks it again with `confirmSession`.
 */
export async function resolveSession(cookieValue: string | undefined, now: Date): Promise<Session | undefined> {
  if (cookieValue === undefined || !SESSION_VALUE.test(cookieValue)) return undefined;
  const hash = hashKey(cookieValue);
  const stored = await getSession(hash);
  if (!stored) return undefined;
  const at = now.getTime();
  if (at >= stored.endsAt || at >= stored.touchedAt + SESSION_IDLE_MS) return undefined;
  if (at - stored.touchedAt >= SESSION_TOUCH_EVERY_MS) {
    await touchSession(hash, at, Math.min(stored.endsAt, at + SESSION_IDLE_MS));
    return { ...stored, touchedAt: at, hash };
  }
  return { ...stored, hash };
}

/** Whether a form's token is the session's (constant time). */
export function csrfTokenMatches(session: Pick<Session, 'csrfToken'>, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(session.csrfToken);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Whether what opened the session still stands — the account key's hash is still the payer's key,
 * or the passkey is still theirs — read strongly consistent (one read). A session whose opener is
 * gone is ended here and now; false then.
 */
export async function confirmSession(session: Pick<Session, 'hash' | 'userId' | 'openedBy'>): Promise<boolean> {
  if (await openerStands(session)) return true;
  await deleteSession(session.hash, session.userId);
  return false;
}

/** The same check without ending anything (a page outside the console that may only read sessions: consent). */
export async function openerStands(session: Pick<Session, 'userId' | 'openedBy'>): Promise<boolean> {
  const { openedBy, userId } = session;
  if (openedBy.kind === 'accountKey') return (await getUserKeyHash(userId)) === openedBy.keyHash;
  return (await getPasskey(openedBy.credentialId))?.userId === userId;
}

/** The account key a key-opened session acts with (its own, never a newer one); undefined for a passkey session. */
export const sessionAccountKeyHash = (session: Pick<Session, 'openedBy'>): string | undefined =>
  session.openedBy.kind === 'accountKey' ? session.openedBy.keyHash : undefined;

export const endSession = (session: Session): Promise<void> => deleteSession(session.hash, session.userId);

/** `Sign out everywhere` (and a rotation of the account key): every session of the payer ends, this one included. Answers how many. */
export async function endAllSessions(userId: string): Promise<number> {
  const sessions = await listSessions(userId);
  for (const { hash } of sessions) await deleteSession(hash, userId);
  return sessions.length;
}

/**
 * A session as Security lists it: an id for its `End` button (derived from its hash, which stays
 * a key of the table and never leaves it), when it started, what opened it, and when it was last
 * seen. *Decision*: "last seen" is the activity the idle timeout already writes at most every
 * SESSION_TOUCH_EVERY_MS (five minutes), never a write of its own, so a page costs no extra write;
 * it may be up to five minutes behind.
 */
export interface ListedSession {
  id: string;
  startedAt: string;
  lastSeenAt: string;
  openedBy: { kind: 'passkey'; credentialId: string } | { kind: 'accountKey' };
  /** The session of the request that lists them. */
  current: boolean;
}

/** A session's id in pages and URLs: not its hash (a key of the table), a digest of it. */
export const sessionIdOf = (hash: string): string =>
  createHash('sha256').update(`console-session-id:${hash}`).digest('base64url').slice(0, 22);

/**
 * The payer's live sessions, the asking one first, then newest first: the payer's sessions partition (one Query), then their
 * items (one BatchGetItem per 100). An entry whose session has ended (signed out, idle for 30
 * minutes, past 12 hours) is left out: DynamoDB removes both items late.
 */
export async function listMySessions(
  session: Pick<Session, 'userId' | 'hash'>,
  now: Date,
  /** The asking session as this request already read it: not read again (a payer signed in once costs no BatchGetItem). */
  current?: Session,
): Promise<ListedSession[]> {
  const entries = await listSessions(session.userId);
  const known = current && current.hash === session.hash && current.userId === session.userId ? current : undefined;
  const stored = await readSessions(entries.filter((e) => e.hash !== known?.hash).map((e) => e.hash));
  if (known && entries.some((e) => e.hash === known.hash)) stored.set(known.hash, known);
  const at = now.getTime();
  const listed: ListedSession[] = [];
  for (const { hash } of entries) {
    const s = stored.get(hash);
    if (!s || s.userId !== session.userId || at >= s.endsAt || at >= s.touchedAt + SESSION_IDLE_MS) continue;
    listed.push({
      id: sessionIdOf(hash),
      startedAt: new Date(s.createdAt).toISOString(),
      lastSeenAt: new Date(s.touchedAt).toISOString(),
      openedBy: s.openedBy.kind === 'passkey' ? { kind: 'passkey', credentialId: s.openedBy.credentialId } : { kind: 'accountKey' },
      current: hash === session.hash,
    });
  }
  // This browser's first, then the newest.
  return listed.sort(
    (a, b) => Number(b.current) - Number(a.current) || (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0),
  );
}

/**
 * `End` on Security: ends one of the payer's sessions by its listed id. Answers whether it was the
 * session asking (its browser is then signed out), or undefined when the payer has no such session
 * (another payer's id, or one already ended).
 */
export async function endMySession(session: Pick<Session, 'userId' | 'hash'>, id: string): Promise<{ own: boolean } | undefined> {
  const found = (await listSessions(session.userId)).find((e) => sessionIdOf(e.hash) === id);
  if (!found) return undefined;
  await deleteSession(found.hash, session.userId);
  return { own: found.hash === session.hash };
}

/** A passkey removed: the sessions it opened end. Answers how many. */
export async function endSessionsOpenedBy(userId: string, credentialId: string): Promise<number> {
  const sessions = (await listSessions(userId)).filter((s) => s.openedByPasskey === credentialId);
  for (const { hash } of sessions) await deleteSession(hash, userId);
  return sessions.length;
}

/** The account key of a payer who just signed up: shown by /console/welcome once. */
export const takeWelcome = (session: Session): Promise<string | undefined> => takeWelcomeKey(session.hash);

const minuteWindow = (action: string, address: string, now: Date): RateWindow => {
  const seconds = 60;
  return { action, address, seconds, start: Math.floor(now.getTime() / 1000 / seconds) * seconds };
};

/**
 * Sign-in with the account key (payers made by the operator or the API). More than
 * SIGN_IN_FAILURES_PER_MINUTE failures from one address in a minute: 429 until the minute ends,
 * the key not even looked at. A wrong key: 401 `invalid account key`, counted.
 */
export async function signInWithAccountKey(accountKey: string | undefined, address: string, now: Date) {
  const window = minuteWindow('signin', address, now);
  const retryAfter = window.start + window.seconds - now.getTime() / 1000;
  if ((await readAttempts(window)) >= SIGN_IN_FAILURES_PER_MINUTE) throw new Refusal('tooManySignIns', [], { retryAfter: retryAfter });
  const keyHash = looksLikeKey(accountKey, USER_KEY_PREFIX) ? hashKey(accountKey) : undefined;
  const userId = keyHash ? (await lookupCredentials({ userKeyHash: keyHash })).userId : undefined;
  if (!userId || !keyHash) {
    await countAttempt(window);
    throw refuse('consoleInvalidAccountKey');
  }
  await markAccountKeySignIn(userId, now);
  try {
    // Opened by this key: valid while it is the payer's (written conditioned on it, so a rotation
    // racing this sign-in cannot leave it behind).
    return await startSession(userId, now, { openedBy: { kind: 'accountKey', keyHash } });
  } catch (error) {
    if (error instanceof UserKeyRevokedError) throw refuse('consoleInvalidAccountKey');
    throw error;
  }
}

/** A failed passkey sign-in counts as a failed sign-in of its address too. */
export async function countFailedSignIn(address: string, now: Date): Promise<void> {
  await countAttempt(minuteWindow('signin', address, now));
}

export async function refuseIfSignInsBlocked(address: string, now: Date): Promise<void> {
  const window = minuteWindow('signin', address, now);
  if ((await readAttempts(window)) >= SIGN_IN_FAILURES_PER_MINUTE) {
    throw new Refusal('tooManySignIns', [], { retryAfter: window.start + window.seconds - now.getTime() / 1000 });
  }
}

/** Sign-ups started from one address in an hour, at most. */
export const SIGN_UPS_PER_HOUR = 10;

const signUpWindow = (address: string, now: Date): RateWindow => {
  const seconds = 3_600;
  return { action: 'signup', address, seconds, start: Math.floor(now.getTime() / 1000 / seconds) * seconds };
};

/**
 * Before a sign-up ceremony (its options): 429 once `address` has signed up SIGN_UPS_PER_HOUR times
 * this hour. Reads only: asking for options writes nothing (DESIGN §24).
 */
export async function readSignUps(address: string, now: Date): Promise<void> {
  const window = signUpWindow(address, now);
  if ((await readWindow(window)) >= SIGN_UPS_PER_HOUR) {
    throw new Refusal('tooManySignUps', [], { retryAfter: window.start + window.seconds - now.getTime() / 1000 });
  }
}

/** Counts a sign-up from `address` as it completes (its passkey verified): 429 past SIGN_UPS_PER_HOUR in the hour. */
export async function countSignUp(address: string, now: Date): Promise<void> {
  const window = signUpWindow(address, now);
  const count = await countAttempt(window);
  if (count > SIGN_UPS_PER_HOUR)
    throw new Refusal('tooManySignUps', [], { retryAfter: window.start + window.seconds - now.getTime() / 1000 });
}
