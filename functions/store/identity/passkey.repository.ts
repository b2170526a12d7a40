/**
 * Passkeys and spent WebAuthn challenges (DESIGN §21, §24, docs/console.md). A passkey is two
 * items: by its credential id (a discoverable sign-in names only the credential) and in its payer's
 * partition (the Security page's list, and what a rotation sweeps), both saying when and how it was
 * added. A challenge is stored nowhere until a ceremony answers it (it is HMAC-bound and carried
 * by the page, use-cases/identity/webauthn-challenge.ts); the answer records its hash once, with a
 * conditional Put, so it cannot be answered twice.
 */

import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import { PasskeyGoneError, PasskeyTakenError } from '../../core/errors';
import type { PasskeyList, PasskeyOrigin } from '../../core/passkeys';
import { db } from '../client';
import { keys, TTL_ATTRIBUTE } from '../table';
import {
  ConditionFailedError,
  conditionalWrite,
  type NamedItem,
  named,
  outcome,
  type TransactEntry,
  type TransactItem,
  transactWrite,
} from '../transact';

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
  /** The name given when it was made (undefined for a passkey stored before passkeys had names). */
  name?: string;
  /** How it was added (undefined for a passkey stored before that was recorded). */
  addedBy?: PasskeyOrigin;
  /**
   * Whether the account key stands behind it: added from a key-opened session, or vouched for by a
   * passkey that was. A rotation of the key removes these (DESIGN §24). True when unknown (stored
   * before this was recorded): a passkey planted with a leaked key then is gone with the key too.
   */
  fromAccountKey: boolean;
}

/** Saves a passkey; `also` joins the transaction (the proof's conditions, the `user.passkey.added` outbox item). */
export async function savePasskey(passkey: Passkey, also: readonly TransactEntry[] = []): Promise<void> {
  await transactWrite([...passkeyItems(passkey), ...also]);
}

/** The items that save a passkey: for a transaction that creates its payer too (a console sign-up). */
export function passkeyItems(passkey: Passkey): TransactEntry[] {
  const table = config().TABLE_NAME;
  const { credentialId, userId, createdAt, name, addedBy, fromAccountKey } = passkey;
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
        Item: {
          ...keys.userPasskey(userId, credentialId),
          type: 'UserPasskey',
          credentialId,
          createdAt,
          ...(name !== undefined ? { name } : {}),
          ...(addedBy ? { addedBy } : {}),
          fromAccountKey,
        },
      },
    },
  ];
}

/** A condition for a transaction: the payer's passkey `credentialId` is still there (not removed, not by a rotation). */
export function passkeyCheck(userId: string, credentialId: string): NamedItem {
  return named(
    {
      ConditionCheck: {
        TableName: config().TABLE_NAME,
        Key: keys.passkey(credentialId),
        ConditionExpression: 'userId = :userId',
        ExpressionAttributeValues: { ':userId': userId },
      },
    },
    { onConditionFailed: () => new PasskeyGoneError() },
  );
}

const originOf = (value: unknown): PasskeyOrigin | undefined => {
  if (!value || typeof value !== 'object') return undefined;
  const { kind, credentialId, name } = value as Record<string, unknown>;
  if (kind === 'signup' || kind === 'accountKey') return { kind };
  if (kind === 'passkey' && typeof credentialId === 'string') return { kind, credentialId, name: typeof name === 'string' ? name : '' };
  return undefined;
};

const toPasskey = (item: Record<string, unknown>): Passkey => {
  const addedBy = originOf(item.addedBy);
  return {
    credentialId: String(item.credentialId),
    userId: String(item.userId),
    publicKey: String(item.publicKey),
    counter: Number(item.counter ?? 0),
    transports: Array.isArray(item.transports) ? item.transports.map(String) : [],
    createdAt: String(item.createdAt),
    ...(typeof item.lastUsedAt === 'string' ? { lastUsedAt: item.lastUsedAt } : {}),
    ...(typeof item.name === 'string' ? { name: item.name } : {}),
    ...(addedBy ? { addedBy } : {}),
    fromAccountKey: item.fromAccountKey !== false,
  };
};

export async function getPasskey(credentialId: string): Promise<Passkey | undefined> {
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.passkey(credentialId), ConsistentRead: true }));
  return out.Item ? toPasskey(out.Item) : undefined;
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
    else {
      const addedBy = originOf(item.addedBy);
      list.passkeys.push({
        credentialId: String(item.credentialId),
        createdAt: String(item.createdAt),
        ...(typeof item.name === 'string' ? { name: item.name } : {}),
        ...(addedBy ? { addedBy } : {}),
        fromAccountKey: item.fromAccountKey !== false,
      });
    }
  }
  return list;
}

/** The Update that records a use of `passkey`: conditioned on the counter the verification judged (and so on the passkey still being there). */
function passkeyUseUpdate(passkey: Passkey, newCounter: number, now: Date): TransactItem & { Update: object } {
  return {
    Update: {
      TableName: config().TABLE_NAME,
      Key: keys.passkey(passkey.credentialId),
      UpdateExpression: 'SET #counter = :new, lastUsedAt = :now',
      ConditionExpression: 'userId = :userId AND #counter = :old',
      ExpressionAttributeNames: { '#counter': 'counter' },
      ExpressionAttributeValues: { ':new': newCounter, ':old': passkey.counter, ':now': now.toISOString(), ':userId': passkey.userId },
    },
  };
}

/**
 * Records a use: the new counter, conditioned on the one the verification judged (two ceremonies
 * racing with one signature count cannot both pass). False when the counter moved meanwhile, or
 * the passkey is gone.
 */
export async function recordPasskeyUse(passkey: Passkey, newCounter: number, now: Date): Promise<boolean> {
  const result = await conditionalWrite(passkeyUseUpdate(passkey, newCounter, now), () => outcome('counter-moved'));
  return result.committed;
}

/** The same use as a transaction item (a sign-in's session is written with it): PasskeyGoneError when it moved or is gone. */
export const passkeyUseItem = (passkey: Passkey, newCounter: number, now: Date): NamedItem =>
  named(passkeyUseUpdate(passkey, newCounter, now), { onConditionFailed: () => new PasskeyGoneError() });

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

/**
 * Spends a challenge: records its digest (`attribute_not_exists`, so once), kept until it would
 * have expired anyway. False when it was spent already.
 */
export async function spendChallenge(digest: string, expiresAt: number): Promise<boolean> {
  const result = await conditionalWrite(
    {
      Put: {
        TableName: config().TABLE_NAME,
        Item: { ...keys.webauthnChallenge(digest), type: 'SpentWebAuthnChallenge', [TTL_ATTRIBUTE]: Math.ceil(expiresAt / 1000) },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    () => outcome('spent'),
  );
  return result.committed;
}
