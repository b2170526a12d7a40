/**
 * The payer's account key (DESIGN §16, §24, docs/grants.md "Rotating the account key"): rotating it
 * is the answer to a leaked key, so a rotation also ends what the old key could have made for
 * whoever holds it — every active grant, every user webhook endpoint, every open account-key
 * charge, every open tab (closed at what it used), every console session of the payer and every
 * passkey the key stands behind (added from a key-opened session, or vouched for by one that was) —
 * and lists them in its answer (the tabs: the payer's list of tabs shows them closed).
 * The payer's own route, the console's and the operator's (a payer locked out) rotate alike.
 */
import { grantView } from '../../contracts/grants';
import { userChargeView } from '../../contracts/views';
import { StaleReadError } from '../../core/errors';
import { ownerKey } from '../../core/events';
import { generateKey, hashKey, USER_KEY_PREFIX } from '../../core/keys';
import type { ListedPasskey } from '../../core/passkeys';
import { isRefusal, refuse } from '../../messages/refusal';
import { listUserCharges, userChargePosition } from '../../store/charges/charge-read.repository';
import type { Settlement } from '../../store/charges/charge-settlement.repository';
import { deleteWebhook, listWebhooks } from '../../store/events/webhook.repository';
import { deletePasskey, listPasskeys } from '../../store/identity/passkey.repository';
import { rotateUserKey } from '../../store/identity/user.repository';
import type { TransactEntry } from '../../store/transact';
import { forgetUserKey } from '../auth';
import { webhookView } from '../events/webhooks';
import { closePayerTabs } from '../tabs/close';
import { endAllSessions, listMySessions, type Session } from './console-sessions';
import { listMyGrants, revokeGrantItem } from './grants';
import { settle } from './payers';

/**
 * POST /api/v1/users/me/keys/rotate: a new user key, shown once (`rotateAccountKey`); 409 when
 * another rotation won.
 */
export async function rotateMyKey(
  userId: string,
  oldKeyHash: string,
  opts: { also?: readonly TransactEntry[] } = {},
): Promise<RotatedAccountKey> {
  try {
    return await rotateAccountKey(userId, oldKeyHash, opts);
  } catch (error) {
    if (error instanceof StaleReadError) throw refuse('userKeyRotatedConcurrently');
    throw error;
  }
}

/** What a rotation answers: the new account key, shown once, and what it ended of the old key's. */
export interface RotatedAccountKey {
  userKey: string;
  /** The grants it revoked, as the API shows them (never a key). */
  revokedGrants: ReturnType<typeof grantView>[];
  /** The user webhook endpoints it deleted (never a secret). */
  deletedWebhooks: ReturnType<typeof webhookView>[];
  /** The account-key charges it found open (awaiting approval or capture), now FAILED with their hold back. */
  releasedCharges: ReturnType<typeof userChargeView>[];
  /** How many console sessions of the payer it ended: every one, whatever opened it. */
  endedSessions: number;
  /** The names of the passkeys it removed: every one the account key stands behind. */
  removedPasskeys: string[];
}

/**
 * What a rotation would end if it ran now, for the console's confirmation (DESIGN §26: a
 * destructive action says what will end first): the active grants and the webhook endpoints by
 * number, the open account-key charges, the live sessions (the asking one included), and the
 * passkeys the account key stands behind by name. Reads only; what is made meanwhile is ended too.
 */
export interface RotationReach {
  activeGrants: number;
  webhooks: number;
  openCharges: number;
  sessions: number;
  keyBackedPasskeys: string[];
}

export async function rotationReach(session: Pick<Session, 'userId' | 'hash'>, now: Date): Promise<RotationReach> {
  const { userId } = session;
  let activeGrants = 0;
  let after: string | undefined;
  do {
    const page = await listMyGrants(userId, { limit: 100, status: 'active', ...(after ? { after } : {}) });
    activeGrants += page.grants.length;
    after = page.lastId;
  } while (after !== undefined);
  let openCharges = 0;
  let position: Awaited<ReturnType<typeof userChargePosition>> | undefined;
  let afterCharge: string | undefined;
  do {
    position = afterCharge === undefined ? undefined : await userChargePosition(userId, afterCharge);
    const page = await listUserCharges(userId, { limit: 100, status: 'PENDING', ...(position ? { after: position } : {}) });
    openCharges += page.charges.filter((c) => c.grantId === undefined).length;
    afterCharge = page.lastId;
  } while (afterCharge !== undefined);
  const [webhooks, sessions, passkeys] = await Promise.all([
    listWebhooks(ownerKey({ kind: 'user', id: userId })),
    listMySessions(session, now),
    listPasskeys(userId),
  ]);
  return {
    activeGrants,
    webhooks: webhooks.length,
    openCharges,
    sessions: sessions.length,
    keyBackedPasskeys: passkeys.passkeys.filter((p) => p.fromAccountKey).map((p) => p.name ?? p.credentialId),
  };
}

/**
 * An open charge made with the account key, ended by its rotation: FAILED, the hold back to the
 * payer. The agent was answered its approval link (an account-key charge's 202 carries it), and a
 * hold waits for the agent's capture: both would otherwise pay whoever held the old key, after it.
 */
export const RELEASED_BY_ROTATION = {
  kind: 'return',
  status: 'FAILED',
  failureReason: 'account key rotated',
} as const satisfies Settlement;

/**
 * Replaces the payer's account key (the answer to a leaked one: docs/grants.md, docs/webhooks.md)
 * and ends what the old key could have made for whoever holds it: every active grant is revoked
 * (`grant.revoked` to both sides, as a DELETE does), every user webhook endpoint deleted and every
 * open charge made with the account key released (`releaseOpenCharges`), every open tab closed at
 * what it used (`closePayerTabs`); the answer lists them so the payer can make again what was
 * theirs. The old key stops moving money at once (every charge is conditioned on the key's hash
 * on the user's item), stops authenticating within the auth cache's lifetime elsewhere (at once
 * here), and can make no grant, endpoint or tab after the rotation (their creates are conditioned
 * on it), so what the sweep after it finds is all there is. A sweep before it too: if ending them fails, the key is not rotated yet
 * and a retry with it does it all again; the sweep after finds only what was made meanwhile.
 * StaleReadError when another rotation won (the caller words it).
 */
export async function rotateAccountKey(
  userId: string,
  oldKeyHash: string,
  opts: { also?: readonly TransactEntry[] } = {},
): Promise<RotatedAccountKey> {
  const before = await endAccountCredentials(userId);
  const consoleBefore = await endConsoleAccess(userId);
  const userKey = generateKey(USER_KEY_PREFIX);
  // `also` joins the rotation's transaction (the console's idempotency record).
  await rotateUserKey(userId, oldKeyHash, hashKey(userKey), opts.also);
  forgetUserKey(oldKeyHash);
  const after = await endAccountCredentials(userId);
  // After the key is replaced no session opens with the old key and no passkey is added with it
  // (both are written conditioned on it): what this finds is the last of them.
  const consoleAfter = await endConsoleAccess(userId);
  return {
    userKey,
    revokedGrants: [...before.grants, ...after.grants],
    deletedWebhooks: [...before.webhooks, ...after.webhooks],
    releasedCharges: [...before.charges, ...after.charges],
    endedSessions: consoleBefore.endedSessions + consoleAfter.endedSessions,
    removedPasskeys: [...consoleBefore.removedPasskeys, ...consoleAfter.removedPasskeys],
  };
}

/**
 * The console's side of a rotation (DESIGN §24): the passkeys the account key stands behind are
 * removed first (so none of them opens a session again), then every session of the payer ends —
 * the key-opened ones, the passkey ones, the one that asked for this rotation. The payer signs in
 * again with the new key or a passkey of their own.
 */
async function endConsoleAccess(userId: string): Promise<{ endedSessions: number; removedPasskeys: string[] }> {
  const removed = await removeKeyBackedPasskeys(userId);
  const endedSessions = await endAllSessions(userId);
  return { endedSessions, removedPasskeys: removed.map((p) => p.name ?? p.credentialId) };
}

/**
 * Every passkey the account key stands behind is removed — added from a key-opened session, vouched
 * for by one that was, or of unknown origin (stored before origins were recorded). Repeated until a
 * listing finds none, since such a passkey can vouch for another while it stands (each new one is
 * saved conditioned on its voucher still being there, so the rounds end). Answers the removed ones.
 */
async function removeKeyBackedPasskeys(userId: string): Promise<ListedPasskey[]> {
  const removed: ListedPasskey[] = [];
  for (let round = 0; round < 10; round++) {
    const backed = (await listPasskeys(userId)).passkeys.filter((p) => p.fromAccountKey);
    if (backed.length === 0) return removed;
    for (const passkey of backed) {
      // Gone meanwhile (removed by the payer, or a racing rotation): listed by whoever removed it.
      if (await deletePasskey(userId, passkey.credentialId)) removed.push(passkey);
    }
  }
  throw new Error('passkeys kept being added behind the account key while the rotation removed them');
}

/** Revokes every active grant of the payer and deletes every user webhook endpoint; returns them as the API shows them. */
async function endAccountCredentials(userId: string): Promise<{
  grants: RotatedAccountKey['revokedGrants'];
  webhooks: RotatedAccountKey['deletedWebhooks'];
  charges: RotatedAccountKey['releasedCharges'];
}> {
  const grants: RotatedAccountKey['revokedGrants'] = [];
  let after: string | undefined;
  do {
    const page = await listMyGrants(userId, { limit: 100, status: 'active', ...(after ? { after } : {}) });
    for (const grant of page.grants) {
      // Revoking is idempotent: a grant the payer revokes meanwhile is answered as it is. Its tabs
      // close with every other tab of the payer's, below.
      grants.push(grantView(await revokeGrantItem(userId, grant.id)));
    }
    after = page.lastId;
  } while (after !== undefined);
  const owner = ownerKey({ kind: 'user', id: userId });
  const webhooks: RotatedAccountKey['deletedWebhooks'] = [];
  for (const webhook of await listWebhooks(owner)) {
    // Deleted meanwhile (by the payer, or a racing rotation): gone either way, listed by whoever deleted it.
    if (await deleteWebhook(owner, webhook.id)) webhooks.push(webhookView(webhook));
  }
  const charges = await releaseOpenCharges(userId);
  // Every tab still open was opened with the old key or under a grant revoked above: closed at what
  // it used (docs/tabs.md "Rotation and revocation"); one that cannot be closed fails the sweep.
  await closePayerTabs(userId);
  return { grants, webhooks, charges };
}

/**
 * Ends every open charge the account key made (a grant's ended with its revocation, above), one
 * settlement each, exactly as the payer's own release: one that was decided, released or expired
 * meanwhile is left to whoever did. Charges made after the rotation cannot be the old key's (their
 * commit is conditioned on the key's hash).
 */
async function releaseOpenCharges(userId: string): Promise<RotatedAccountKey['releasedCharges']> {
  const released: RotatedAccountKey['releasedCharges'] = [];
  let after: string | undefined;
  do {
    const position = after === undefined ? undefined : await userChargePosition(userId, after);
    const page = await listUserCharges(userId, { limit: 100, status: 'PENDING', ...(position ? { after: position } : {}) });
    for (const charge of page.charges) {
      if (charge.grantId !== undefined) continue;
      // A tab's hold with uses is not released: its tab closes at what it used (`closePayerTabs`,
      // after this). Its release is refused (409 `charge is changing`) and it is left to that.
      try {
        // Released holds (FAILED) only: never a receipt to link, so no links (and the route makes none).
        const settled = await settle(charge.id, RELEASED_BY_ROTATION, (c) => c.userId === userId, { anyReason: true });
        released.push(userChargeView(settled, undefined));
      } catch (error) {
        // Decided, released or expired meanwhile (409), or gone (404): left to whoever did.
        if (!(isRefusal(error) && (error.statusCode === 409 || error.statusCode === 404))) throw error;
      }
    }
    after = page.lastId;
  } while (after !== undefined);
  return released;
}
