/**
 * Console sessions (DESIGN §21, §24, docs/console.md): one item per session, keyed by the hash of
 * the cookie's value (the value is never stored, so a copy of the table signs nobody in), and one
 * entry in the payer's sessions partition so `Sign out everywhere`, a rotation and a passkey's
 * removal find them. Both carry the TTL of the session's end; the code checks the times itself
 * (DynamoDB deletes expired items late). Each records what opened it — a passkey (its credential
 * id) or the account key (the key's hash) — and is valid only while that is.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import { batchGetConsistent } from '../batch-get';
import { db } from '../client';
import { keys, TTL_ATTRIBUTE } from '../table';
import { conditionalWrite, outcome, type TransactEntry, type TransactItem, transactWrite } from '../transact';

/** What opened a session: a passkey (by its credential id) or the account key (by its hash). */
export type SessionOpener = { kind: 'passkey'; credentialId: string } | { kind: 'accountKey'; keyHash: string };

export interface StoredSession {
  userId: string;
  csrfToken: string;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms of the last request that counted as activity (written at most every few minutes). */
  touchedAt: number;
  /** Epoch ms: the absolute end, whatever the activity. */
  endsAt: number;
  /** What opened it: the session is valid only while that is (docs/console.md "Sessions and what opened them"). */
  openedBy: SessionOpener;
  /** The account key of a payer who just signed up, until /console/welcome has shown it once. */
  welcomeKey?: string;
}

/** A session as its payer's partition lists it: its hash, and the passkey that opened it (if one did). */
export interface SessionEntry {
  hash: string;
  openedByPasskey?: string;
}

const ttlOf = (epochMs: number) => Math.ceil(epochMs / 1000);

/**
 * Stores a new session; `idleEnd` is when it ends unless used again (its TTL). `also` joins the
 * transaction: what opened it, checked still valid as it commits (the account key's hash still the
 * payer's, a passkey's counter moved on), so a session cannot outlive its opener by a race with a
 * rotation or a removal.
 */
export async function createSession(
  sessionHash: string,
  session: StoredSession,
  idleEnd: number,
  also: readonly TransactEntry[] = [],
): Promise<void> {
  await transactWrite([...sessionItems(sessionHash, session, idleEnd), ...also]);
}

/** The items that store a new session: for a transaction that creates its payer too (a console sign-up). */
export function sessionItems(sessionHash: string, session: StoredSession, idleEnd: number): TransactItem[] {
  const table = config().TABLE_NAME;
  const opener = session.openedBy.kind === 'passkey' ? { openedByPasskey: session.openedBy.credentialId } : {};
  return [
    {
      Put: {
        TableName: table,
        Item: { ...keys.consoleSession(sessionHash), type: 'ConsoleSession', ...session, [TTL_ATTRIBUTE]: ttlOf(idleEnd) },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    {
      Put: {
        TableName: table,
        Item: { ...keys.userSession(session.userId, sessionHash), type: 'UserSession', ...opener, [TTL_ATTRIBUTE]: ttlOf(session.endsAt) },
      },
    },
  ];
}

/** The session of a cookie's hash, strongly consistent (a session just signed out must be gone). */
export async function getSession(sessionHash: string): Promise<StoredSession | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: config().TABLE_NAME, Key: keys.consoleSession(sessionHash), ConsistentRead: true }),
  );
  return storedSessionOf(out.Item);
}

function storedSessionOf(item: Record<string, unknown> | undefined): StoredSession | undefined {
  if (!item || typeof item.userId !== 'string' || typeof item.csrfToken !== 'string') return undefined;
  const openedBy = openerOf(item.openedBy);
  // A session stored before sessions recorded what opened them is tied to nothing: not valid.
  if (!openedBy) return undefined;
  return {
    userId: item.userId,
    csrfToken: item.csrfToken,
    createdAt: Number(item.createdAt),
    touchedAt: Number(item.touchedAt),
    endsAt: Number(item.endsAt),
    openedBy,
    ...(typeof item.welcomeKey === 'string' ? { welcomeKey: item.welcomeKey } : {}),
  };
}

function openerOf(value: unknown): SessionOpener | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const { kind, credentialId, keyHash } = value as Record<string, unknown>;
  if (kind === 'passkey' && typeof credentialId === 'string') return { kind, credentialId };
  if (kind === 'accountKey' && typeof keyHash === 'string') return { kind, keyHash };
  return undefined;
}

/** Marks activity: the idle timeout starts again from `now`. Nothing when the session has ended meanwhile. */
export async function touchSession(sessionHash: string, now: number, idleEnd: number): Promise<void> {
  await conditionalWrite(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.consoleSession(sessionHash),
        UpdateExpression: 'SET touchedAt = :now, #ttl = :ttl',
        // Still there: a sign-out between the read and this write is not undone.
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':now': now, ':ttl': ttlOf(idleEnd) },
      },
    },
    () => outcome('ended'),
  );
}

/** Takes the welcome key off the session: whoever takes it first shows it, nobody again. */
export async function takeWelcomeKey(sessionHash: string): Promise<string | undefined> {
  const result = await conditionalWrite(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.consoleSession(sessionHash),
        UpdateExpression: 'REMOVE welcomeKey',
        ConditionExpression: 'attribute_exists(welcomeKey)',
        ReturnValues: 'UPDATED_OLD',
      },
    },
    // Taken already (or the session ended): nothing to show.
    () => outcome('taken'),
  );
  const key = result.committed ? result.attributes?.welcomeKey : undefined;
  return typeof key === 'string' ? key : undefined;
}

/** Ends one session (both its items); ending one already gone is no error. */
export async function deleteSession(sessionHash: string, userId: string): Promise<void> {
  const table = config().TABLE_NAME;
  await transactWrite([
    { Delete: { TableName: table, Key: keys.consoleSession(sessionHash) } },
    { Delete: { TableName: table, Key: keys.userSession(userId, sessionHash) } },
  ]);
}

/** Every session of a payer (from the payer's sessions partition, strongly consistent: a session just started is there). */
export async function listSessions(userId: string): Promise<SessionEntry[]> {
  const sessions: SessionEntry[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: config().TABLE_NAME,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': keys.userSessionPartition(userId) },
        ProjectionExpression: 'SK, openedByPasskey',
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of out.Items ?? []) {
      sessions.push({
        hash: String(item.SK),
        ...(typeof item.openedByPasskey === 'string' ? { openedByPasskey: item.openedByPasskey } : {}),
      });
    }
    start = out.LastEvaluatedKey;
  } while (start);
  return sessions;
}

/**
 * The sessions of these hashes that are still stored, by hash (Security's list: one strongly
 * consistent BatchGetItem per 100, after `listSessions`). The payer's partition keeps an entry
 * until the session's absolute end; the item goes with sign-out or, late, with its idle TTL: the
 * caller judges the times.
 */
export async function readSessions(hashes: readonly string[]): Promise<Map<string, StoredSession>> {
  const found = new Map<string, StoredSession>();
  for (let i = 0; i < hashes.length; i += 100) {
    const items = await batchGetConsistent(hashes.slice(i, i + 100).map((hash) => keys.consoleSession(hash)));
    for (const item of items) {
      const stored = storedSessionOf(item);
      const hash = String(item.PK).slice(keys.consoleSession('').PK.length);
      if (stored) found.set(hash, stored);
    }
  }
  return found;
}
