/**
 * Passkeys and WebAuthn challenges (DESIGN §21, docs/console.md). A passkey is two items: by its
 * credential id (a discoverable sign-in names only the credential) and in its payer's partition
 * (the Security page's list). A challenge is one item from the moment it is handed out until the
 * ceremony that uses it deletes it: a DeleteItem that returns it is the single use.
 */
import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { PasskeyTakenError } from '../core/errors';
import { db } from './client';
import { keys, TTL_ATTRIBUTE } from './table';
import { ConditionFailedError, conditionalWrite, named, outcome, type TransactEntry, transactWrite } from './transact';

export interface Passkey {
  credentialId: string;
  userId: string;
  /** COSE public key, base64url. */
  publicKey: string;
  /** The authenticator's signature counter as last seen (0 for authenticators that keep none). */
  counter: number;
  transports: string[];
  createdAt: string;
  lastUsedAt?: string;
}

export async function savePasskey(passkey: Passkey): Promise<void> {
  await transactWrite(passkeyItems(passkey));
}

/** The items that save a passkey: for a transaction that creates its payer too (a console sign-up). */
export function passkeyItems(passkey: Passkey): TransactEntry[] {
  const table = config().TABLE_NAME;
  const { credentialId, userId, createdAt } = passkey;
  return [
    named(
      {
        Put: {
          TableName: table,
          Item: { ...keys.passkey(credentialId), type: 'Passkey', ...passkey },
          // A credential id is the authenticator's; a second registration of it is refused.
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      { onConditionFailed: () => new PasskeyTakenError() },
    ),
    {
      Put: {
        TableName: table,
        Item: { ...keys.userPasskey(userId, credentialId), type: 'UserPasskey', credentialId, createdAt },
      },
    },
  ];
}

const toPasskey = (item: Record<string, unknown>): Passkey => ({
  credentialId: String(item.credentialId),
  userId: String(item.userId),
  publicKey: String(item.publicKey),
  counter: Number(item.counter ?? 0),
  transports: Array.isArray(item.transports) ? item.transports.map(String) : [],
  createdAt: String(item.createdAt),
  ...(typeof item.lastUsedAt === 'string' ? { lastUsedAt: item.lastUsedAt } : {}),
});

export async function getPasskey(credentialId: string): Promise<Passkey | undefined> {
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.passkey(credentialId), ConsistentRead: true }));
  return out.Item ? toPasskey(out.Item) : undefined;
}

export interface PasskeyList {
  passkeys: { credentialId: string; createdAt: string }[];
  /** When the payer last signed in with the account key (they have it at hand), if ever. */
  accountKeySignInAt?: string;
}

/** The payer's passkeys and the account-key marker: one Query of their partition. */
export async function listPasskeys(userId: string): Promise<PasskeyList> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': keys.userPasskeyPartition(userId) },
      ConsistentRead: true,
    }),
  );
  const list: PasskeyList = { passkeys: [] };
  for (const item of out.Items ?? []) {
    if (item.SK === 'ACCOUNTKEY') list.accountKeySignInAt = String(item.at);
    else list.passkeys.push({ credentialId: String(item.credentialId), createdAt: String(item.createdAt) });
  }
  return list;
}

/**
 * Records a use: the new counter, conditioned on the one the verification judged (two sign-ins
 * racing with one signature count cannot both pass). False when the counter moved meanwhile.
 */
export async function recordPasskeyUse(passkey: Passkey, newCounter: number, now: Date): Promise<boolean> {
  const result = await conditionalWrite(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.passkey(passkey.credentialId),
        UpdateExpression: 'SET #counter = :new, lastUsedAt = :now',
        ConditionExpression: '#counter = :old',
        ExpressionAttributeNames: { '#counter': 'counter' },
        ExpressionAttributeValues: { ':new': newCounter, ':old': passkey.counter, ':now': now.toISOString() },
      },
    },
    () => outcome('counter-moved'),
  );
  return result.committed;
}

/** Removes one of the payer's passkeys; false when it is not theirs (or gone). */
export async function deletePasskey(userId: string, credentialId: string): Promise<boolean> {
  const table = config().TABLE_NAME;
  try {
    await transactWrite([
      {
        Delete: {
          TableName: table,
          Key: keys.passkey(credentialId),
          ConditionExpression: 'userId = :userId',
          ExpressionAttributeValues: { ':userId': userId },
        },
      },
      { Delete: { TableName: table, Key: keys.userPasskey(userId, credentialId) } },
    ]);
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError) return false;
    throw error;
  }
}

/** Notes that the payer signed in with the account key: they hold it, so they cannot lose their way in with their last passkey. */
export async function markAccountKeySignIn(userId: string, now: Date): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: config().TABLE_NAME,
      Item: { ...keys.userAccountKeyMarker(userId), type: 'AccountKeySignIn', at: now.toISOString() },
    }),
  );
}

export interface StoredChallenge {
  purpose: 'signup' | 'login' | 'add';
  /** Epoch ms. */
  expiresAt: number;
  /** `add`: the signed-in payer adding a passkey. */
  userId?: string;
  /** `signup`: the name the payer gave (optional). */
  name?: string;
}

export async function saveChallenge(challenge: string, stored: StoredChallenge): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: config().TABLE_NAME,
      Item: {
        ...keys.webauthnChallenge(challenge),
        type: 'WebAuthnChallenge',
        ...stored,
        [TTL_ATTRIBUTE]: Math.ceil(stored.expiresAt / 1000),
      },
      ConditionExpression: 'attribute_not_exists(PK)',
    }),
  );
}

/** Takes a challenge for use: it is deleted, and whoever deleted it has it. Undefined when unknown or used. */
export async function takeChallenge(challenge: string): Promise<StoredChallenge | undefined> {
  const out = await db().send(
    new DeleteCommand({ TableName: config().TABLE_NAME, Key: keys.webauthnChallenge(challenge), ReturnValues: 'ALL_OLD' }),
  );
  const item = out.Attributes;
  if (!item || (item.purpose !== 'signup' && item.purpose !== 'login' && item.purpose !== 'add')) return undefined;
  return {
    purpose: item.purpose,
    expiresAt: Number(item.expiresAt),
    ...(typeof item.userId === 'string' ? { userId: item.userId } : {}),
    ...(typeof item.name === 'string' ? { name: item.name } : {}),
  };
}
