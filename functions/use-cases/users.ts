/** Users: created and credited by the operator (admin API / CLI). */
import { ConflictError, IdempotencyInProgressError, NotFoundError } from '../core/errors';
import { newUserId } from '../core/ids';
import { generateKey, hashKey, USER_KEY_PREFIX } from '../core/keys';
import type { Currency } from '../core/money';
import { type HttpResult, serialize } from '../http/response';
import { backoffMs, ConcurrencyError, ConditionFailedError } from '../store/transact';
import { CREDIT_IDEMPOTENCY_INDEX, createUser, creditUser, getUser } from '../store/user.repository';
import { parseMoney } from './charges';
import { fingerprint, replay } from './idempotency';
import { balancesView } from './views';

/** Creates a user with zero balances; the user key is returned once. */
export async function createUserWithKey(): Promise<HttpResult> {
  const userKey = generateKey(USER_KEY_PREFIX);
  const user = await createUser(newUserId(), hashKey(userKey), new Date());
  return { statusCode: 201, body: { id: user.id, userKey } };
}

const USER_ID = /^u[0-9a-z]{26}$/;

function checkUserId(userId: string | undefined): string {
  if (!userId || !USER_ID.test(userId)) throw new NotFoundError('user not found');
  return userId;
}

export async function readUser(userId: string | undefined): Promise<HttpResult> {
  const user = await getUser(checkUserId(userId));
  if (!user) throw new NotFoundError('user not found');
  return { statusCode: 200, body: { id: user.id, balances: balancesView(user.balances) } };
}

/**
 * Every failed round is caused by another write that committed, so N concurrent credits to one
 * user all land within N rounds; beyond this many the caller gets 409 + Retry-After.
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const CREDIT_ROUNDS = 10;

/**
 * Tops up a user's balance. Idempotent: the Idempotency-Key, scoped to admin credits, is written
 * in the same transaction as the credit; a replay returns the balances answered the first time.
 */
export async function creditUserBalance(input: {
  userId: string | undefined;
  idempotencyKey: string;
  amount: string;
  currency: Currency;
}): Promise<HttpResult> {
  const userId = checkUserId(input.userId);
  const amount = parseMoney(input.amount, input.currency);
  const scope = 'admin#credits';
  const fp = fingerprint({ userId, amount, currency: input.currency });
  for (let round = 0; round < CREDIT_ROUNDS; round++) {
    if (round > 0) await sleep(backoffMs(round));
    const now = new Date();
    const before = await getUser(userId);
    if (!before) throw new NotFoundError('user not found');
    const after = { ...before.balances, [input.currency]: before.balances[input.currency] + amount };
    const body = serialize({ id: userId, balances: balancesView(after) });
    try {
      await creditUser(
        userId,
        before.balances,
        amount,
        input.currency,
        { scope, key: input.idempotencyKey, record: { fingerprint: fp, statusCode: 200, body } },
        now,
      );
      return { statusCode: 200, rawBody: body };
    } catch (error) {
      if (error instanceof ConditionFailedError) {
        if (error.failed.includes(CREDIT_IDEMPOTENCY_INDEX)) {
          const answer = await replay(scope, input.idempotencyKey, error.oldItems.get(CREDIT_IDEMPOTENCY_INDEX), fp, new Date());
          if (answer) return answer;
        }
        // Otherwise the balances moved since the read (a charge, another credit): read again.
        continue;
      }
      if (error instanceof ConcurrencyError) throw new IdempotencyInProgressError();
      throw error;
    }
  }
  throw new ConflictError('user balance is changing too fast, retry', 1);
}
