/**
 * Users and their prepaid balances. A user's balances live on the user item, one numeric
 * attribute per currency in minor units; every debit is a conditional update on that item. The
 * item also carries what a charge is judged by (policy, spend counters, the key's hash): see
 * store/charges/payer.ts, and store/charges/charge-items.ts for a charge's debit of it.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import { StaleReadError } from '../../core/errors';
import type { IdempotencyWrite } from '../../core/idempotency';
import { newRecordId } from '../../core/ids';
import { CURRENCIES, type Currency, type Minor } from '../../core/money';
import type { SpendingPolicy } from '../../core/policy';
import { type Balances, type PayerState, type User, zeroBalances } from '../../core/users';
import { heldAttribute, payerStateOf } from '../charges/payer';
import { db } from '../client';
import { idempotencyPut } from '../idempotency.repository';
import { readMinor } from '../numbers';
import { operatorCreditEntry, statementPut } from '../statement/statement-items';
import { keys } from '../table';
import { owedAttribute } from '../topups/owed';
import { conditionalWrite, named, outcome, type TransactEntry, type TransactItem, transactWrite } from '../transact';

export async function createUser(userId: string, keyHash: string, now: Date, also: readonly TransactEntry[] = []): Promise<User> {
  const table = config().TABLE_NAME;
  const user: User = {
    id: userId,
    balances: zeroBalances(),
    held: zeroBalances(),
    owed: zeroBalances(),
    policy: {},
    policyVersion: 0,
    createdAt: now.toISOString(),
  };
  await transactWrite([
    {
      Put: {
        TableName: table,
        // `statementFrom`: every movement of this payer has a statement entry (the ledger audit sums them; docs/statement.md).
        Item: {
          ...keys.user(userId),
          type: 'User',
          userId,
          ...user.balances,
          keyHash,
          createdAt: user.createdAt,
          statementFrom: user.createdAt,
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    {
      Put: {
        TableName: table,
        Item: { ...keys.userKey(keyHash), type: 'UserKey', userId },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    // What must exist with the user or not at all (a console sign-up's passkey and session).
    ...also,
  ]);
  return user;
}

export async function getUser(userId: string): Promise<User | undefined> {
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.user(userId), ConsistentRead: true }));
  return out.Item ? toUser(out.Item) : undefined;
}

/**
 * Credits a user (admin top-up) with its idempotency record and an append-only credit record
 * (the ledger audit's "money in") in one transaction. Throws IdempotencyRecordExistsError when
 * the key was used, else StaleReadError when the balances are no longer `expected`.
 */
export async function creditUser(
  userId: string,
  expected: Balances,
  amount: Minor,
  currency: Currency,
  idempotency: IdempotencyWrite,
  now: Date,
): Promise<void> {
  const table = config().TABLE_NAME;
  const creditId = newRecordId();
  await transactWrite([
    named(
      {
        Update: {
          TableName: table,
          Key: keys.user(userId),
          UpdateExpression: 'ADD #cur :amount',
          // Optimistic check: the balances are still the ones the caller read, so the balances it
          // answers with (and stores for replays) are exactly the balances after this credit.
          ConditionExpression: 'attribute_exists(PK) AND USD = :usd AND USDC = :usdc',
          ExpressionAttributeNames: { '#cur': currency },
          ExpressionAttributeValues: { ':amount': amount, ':usd': expected.USD, ':usdc': expected.USDC },
        },
      },
      { onConditionFailed: () => new StaleReadError('user balance') },
    ),
    {
      Put: {
        TableName: table,
        Item: {
          ...keys.credit(userId, creditId),
          type: 'Credit',
          userId,
          amount,
          currency,
          idempotencyKey: idempotency.key,
          createdAt: now.toISOString(),
        },
      },
    },
    idempotencyPut(idempotency, now),
    // The payer's statement entry (docs/statement.md).
    statementPut(operatorCreditEntry(userId, creditId, amount, currency, now)),
  ]);
}

export function toUser(item: Record<string, unknown>): User {
  const balances = zeroBalances();
  const held = zeroBalances();
  const owed = zeroBalances();
  for (const c of CURRENCIES) {
    balances[c] = readMinor(item, c);
    held[c] = readMinor(item, heldAttribute(c));
    owed[c] = readMinor(item, owedAttribute(c));
  }
  return {
    id: String(item.userId),
    balances,
    held,
    owed,
    policy: (item.policy as SpendingPolicy | undefined) ?? {},
    policyVersion: typeof item.policyVersion === 'number' ? item.policyVersion : 0,
    createdAt: String(item.createdAt),
  };
}

/** What a charge is judged by (policy, version, counter periods), read strongly consistently. */
export async function readPayerState(userId: string): Promise<PayerState | undefined> {
  const out = await db().send(
    new GetCommand({
      TableName: config().TABLE_NAME,
      Key: keys.user(userId),
      ConsistentRead: true,
      ProjectionExpression: 'policy, policyVersion, spendDay.p, spendMonth.p',
    }),
  );
  return out.Item ? payerStateOf(out.Item) : undefined;
}

/** Replaces the user's policy and bumps its version (charges judged under the old one retry). */
export async function replacePolicy(userId: string, policy: SpendingPolicy): Promise<User | undefined> {
  const result = await conditionalWrite(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.user(userId),
        UpdateExpression: 'SET policy = :policy ADD policyVersion :one',
        // No such user: nothing to replace (an UpdateItem would otherwise create a stub).
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':policy': policy, ':one': 1 },
        ReturnValues: 'ALL_NEW',
      },
    },
    () => outcome('no user'),
  );
  return result.committed && result.attributes ? toUser(result.attributes) : undefined;
}

/**
 * Replaces the user's key in one transaction: the old key's item goes, the new one's is written,
 * and the user item records the new hash, which every charge is conditioned on — so the old key
 * stops moving money at once, in every container. StaleReadError when the old key is no longer
 * the user's (a concurrent rotation won).
 */
export async function rotateUserKey(
  userId: string,
  oldKeyHash: string,
  newKeyHash: string,
  also: readonly TransactEntry[] = [],
): Promise<void> {
  const table = config().TABLE_NAME;
  // Any of the three failing means another rotation won (or the user is gone).
  const stale = { onConditionFailed: () => new StaleReadError('user key') };
  await transactWrite([
    named(
      {
        Update: {
          TableName: table,
          Key: keys.user(userId),
          UpdateExpression: 'SET keyHash = :new',
          ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(keyHash) OR keyHash = :old)',
          ExpressionAttributeValues: { ':new': newKeyHash, ':old': oldKeyHash },
        },
      },
      stale,
    ),
    named(
      {
        Delete: {
          TableName: table,
          Key: keys.userKey(oldKeyHash),
          ConditionExpression: 'userId = :user',
          ExpressionAttributeValues: { ':user': userId },
        },
      },
      stale,
    ),
    named(
      {
        Put: {
          TableName: table,
          Item: { ...keys.userKey(newKeyHash), type: 'UserKey', userId },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      stale,
    ),
    // What joins the rotation (the console's idempotency record: a double submit rotates once).
    ...also,
  ]);
}

/**
 * A condition that `accountKeyHash` is still the payer's account key (the user item's `keyHash`,
 * which a rotation replaces in its one transaction): what the old key makes after a rotation is refused.
 */
export function accountKeyCheck(userId: string, accountKeyHash: string): TransactItem {
  return {
    ConditionCheck: {
      TableName: config().TABLE_NAME,
      Key: keys.user(userId),
      ConditionExpression: 'keyHash = :accountKey',
      ExpressionAttributeValues: { ':accountKey': accountKeyHash },
    },
  };
}

/** The hash of the user's current key (on the user item), or undefined for an unknown user. */
export async function getUserKeyHash(userId: string): Promise<string | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: config().TABLE_NAME, Key: keys.user(userId), ConsistentRead: true, ProjectionExpression: 'keyHash' }),
  );
  return out.Item && typeof out.Item.keyHash === 'string' ? out.Item.keyHash : undefined;
}
