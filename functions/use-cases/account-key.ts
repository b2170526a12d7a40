/**
 * The payer's account key (DESIGN §16, docs/grants.md "Rotating the account key"): rotating it is
 * the answer to a leaked key, so a rotation also ends what the old key could have made for whoever
 * holds it — every active grant and every user webhook endpoint — and lists them in its answer.
 * The payer's own route and the operator's (a payer locked out) rotate alike.
 */
import type { ApiResult } from '../contracts/api';
import { grantView } from '../contracts/grants';
import { ConflictError, StaleReadError } from '../core/errors';
import { ownerKey } from '../core/events';
import { generateKey, hashKey, USER_KEY_PREFIX } from '../core/keys';
import type { TransactEntry } from '../store/transact';
import { rotateUserKey } from '../store/user.repository';
import { deleteWebhook, listWebhooks } from '../store/webhook.repository';
import { forgetUserKey } from './auth';
import { listMyGrants, revokeMyGrant } from './grants';
import { webhookView } from './webhooks';

/**
 * POST /api/v1/users/me/keys/rotate: a new user key, shown once (`rotateAccountKey`); 409 when
 * another rotation won.
 */
export async function rotateMyKey(userId: string, oldKeyHash: string, opts: { also?: readonly TransactEntry[] } = {}): Promise<ApiResult> {
  try {
    return { statusCode: 200, body: await rotateAccountKey(userId, oldKeyHash, opts) };
  } catch (error) {
    if (error instanceof StaleReadError) throw new ConflictError('user key was rotated concurrently, retry with the new key');
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
}

/**
 * Replaces the payer's account key (the answer to a leaked one: docs/grants.md, docs/webhooks.md)
 * and ends what the old key could have made for whoever holds it: every active grant is revoked
 * (`grant.revoked` to both sides, as a DELETE does) and every user webhook endpoint deleted; the
 * answer lists them so the payer can make again what was theirs. The old key stops moving money
 * at once (every charge is conditioned on the key's hash on the user's item), stops
 * authenticating within the auth cache's lifetime elsewhere (at once here), and can make no grant
 * or endpoint after the rotation (their creates are conditioned on it), so what the sweep after it
 * finds is all there is. A sweep before it too: if ending them fails, the key is not rotated yet
 * and a retry with it does it all again; the sweep after finds only what was made meanwhile.
 * StaleReadError when another rotation won (the caller words it).
 */
export async function rotateAccountKey(
  userId: string,
  oldKeyHash: string,
  opts: { also?: readonly TransactEntry[] } = {},
): Promise<RotatedAccountKey> {
  const before = await endAccountCredentials(userId);
  const userKey = generateKey(USER_KEY_PREFIX);
  // `also` joins the rotation's transaction (the console's idempotency record).
  await rotateUserKey(userId, oldKeyHash, hashKey(userKey), opts.also);
  forgetUserKey(oldKeyHash);
  const after = await endAccountCredentials(userId);
  return {
    userKey,
    revokedGrants: [...before.grants, ...after.grants],
    deletedWebhooks: [...before.webhooks, ...after.webhooks],
  };
}

/** Revokes every active grant of the payer and deletes every user webhook endpoint; returns them as the API shows them. */
async function endAccountCredentials(
  userId: string,
): Promise<{ grants: RotatedAccountKey['revokedGrants']; webhooks: RotatedAccountKey['deletedWebhooks'] }> {
  const grants: RotatedAccountKey['revokedGrants'] = [];
  let after: string | undefined;
  do {
    const page = await listMyGrants(userId, { limit: 100, status: 'active', ...(after ? { after } : {}) });
    for (const grant of page.grants) {
      // Revoking is idempotent: a grant the payer revokes meanwhile is answered as it is.
      grants.push(grantView(await revokeMyGrant(userId, grant.id)));
    }
    after = page.lastId;
  } while (after !== undefined);
  const owner = ownerKey({ kind: 'user', id: userId });
  const webhooks: RotatedAccountKey['deletedWebhooks'] = [];
  for (const webhook of await listWebhooks(owner)) {
    // Deleted meanwhile (by the payer, or a racing rotation): gone either way, listed by whoever deleted it.
    if (await deleteWebhook(owner, webhook.id)) webhooks.push(webhookView(webhook));
  }
  return { grants, webhooks };
}
