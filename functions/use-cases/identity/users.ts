/** Users: created and credited by the operator (admin API / CLI). */

import type { StoredReply } from '../../contracts/api';
import type { CreditRequest } from '../../contracts/request.schemas';
import { type CreatedUser, type CreditedUser, renderCreatedUser, renderCredited } from '../../contracts/settled-outcomes';
import { StaleReadError } from '../../core/errors';
import { isId, newUserId } from '../../core/ids';
import { generateKey, hashKey, USER_KEY_PREFIX } from '../../core/keys';
import { MAX_BALANCE_MINOR } from '../../core/money';
import type { Balances } from '../../core/users';
import { refuse } from '../../messages/refusal';
import { answerSeal } from '../../store/answer-seal';
import { createUser, creditUser, getUser, getUserKeyHash } from '../../store/identity/user.repository';
import type { TransactEntry } from '../../store/transact';
import { creation, idempotent } from '../idempotency';
import { type RotatedAccountKey, rotateAccountKey } from './account-key';

/**
 * Creates a user with zero balances; the user key is returned once. `also` joins the creation's
 * transaction (a console sign-up's passkey and session), given the new user's id and key.
 */
export async function createUserWithKey(
  opts: { also?: (created: { userId: string; userKey: string }) => readonly TransactEntry[] } = {},
): Promise<CreatedUser> {
  const userKey = generateKey(USER_KEY_PREFIX);
  const userId = newUserId();
  const user = await createUser(userId, hashKey(userKey), new Date(), opts.also?.({ userId, userKey }));
  return { userId: user.id, userKey };
}

/**
 * POST /api/v1/admin/users: a user with zero balances (the CLI's table mode: `createUserWithKey`), the key shown
 * once. With an Idempotency-Key (optional) a lost answer can be asked for again: the record joins
 * the creation's transaction and keeps the answer sealed for the replay window (store/answer-seal.ts).
 * Scoped to the operator (`admin#users`), as the operator's credits are; there is no body, so the
 * same key is always the same request.
 */
export function createUserByOperator(idempotencyKey?: string): Promise<CreatedUser | StoredReply> {
  return creation(
    {
      scope: 'admin#users',
      key: idempotencyKey,
      request: {},
      seal: answerSeal,
      render: renderCreatedUser,
    },
    async ({ now, record }) => {
      const created: CreatedUser = { userId: newUserId(), userKey: generateKey(USER_KEY_PREFIX) };
      const item = record(created);
      await createUser(created.userId, hashKey(created.userKey), now, item ? [item] : []);
      return created;
    },
  );
}

function checkUserId(userId: string | undefined): string {
  if (!isId('user', userId)) throw refuse('userNotFound');
  return userId;
}

/** A user and its balances, as the operator reads them. */
export async function readUser(userId: string | undefined): Promise<{ id: string; balances: Balances }> {
  const user = await getUser(checkUserId(userId));
  if (!user) throw refuse('userNotFound');
  return { id: user.id, balances: user.balances };
}

/**
 * Every stale round is caused by another write that committed, so N concurrent credits to one
 * user all land within N rounds; beyond this many the caller gets 409 + Retry-After.
 */
const CREDIT_ROUNDS = 10;

/**
 * Tops up a user's balance. Idempotent: the Idempotency-Key, scoped to admin credits, is written
 * in the same transaction as the credit; a replay returns the balances answered the first time.
 * The credit is conditioned on the balances it read, so the balances it answers with are exactly
 * the balances right after it.
 */
export function creditUserBalance(
  input: CreditRequest & { userId: string | undefined; idempotencyKey: string },
): Promise<CreditedUser | StoredReply> {
  const userId = checkUserId(input.userId);
  const { amount, currency } = input;
  return idempotent(
    {
      scope: 'admin#credits',
      key: input.idempotencyKey,
      request: { userId, amount, currency },
      rounds: CREDIT_ROUNDS,
      exhausted: () => refuse('userBalanceChanging'),
      render: renderCredited,
    },
    async ({ now, record }) => {
      const before = await getUser(userId);
      if (!before) throw refuse('userNotFound');
      const after = { ...before.balances, [currency]: before.balances[currency] + amount };
      // The credit's condition pins the balances read, so this check holds at commit too.
      if (after[currency] > MAX_BALANCE_MINOR) throw refuse('creditPastBalanceLimit');
      const credited: CreditedUser = { userId, balances: after };
      await creditUser(userId, before.balances, amount, currency, record(credited), now);
      return credited;
    },
  );
}

/**
 * The operator's way back in for a payer locked out (DESIGN §16): a new account key, shown once,
 * ending what the old key made as the payer's own rotation does (payers.ts `rotateAccountKey`:
 * every active grant revoked, every user webhook endpoint deleted, both listed in the answer).
 * 404 `user not found`.
 */
export async function rotateUserKeyByOperator(userId: string | undefined): Promise<RotatedAccountKey> {
  const id = checkUserId(userId);
  for (let round = 0; round < 3; round++) {
    const oldKeyHash = await getUserKeyHash(id);
    if (!oldKeyHash) throw refuse('userNotFound');
    try {
      return await rotateAccountKey(id, oldKeyHash);
    } catch (error) {
      // The payer (or another operator) rotated in between: rotate from the key that won.
      if (error instanceof StaleReadError) continue;
      throw error;
    }
  }
  throw refuse('userKeyRotationRaced');
}
