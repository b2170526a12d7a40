/**
 * Idempotency records. A record is written in the SAME TransactWriteItems as the money movement
 * it answers for, so no crash can leave a debit without its record (DESIGN §4).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { db } from './client';
import { keys, TTL_ATTRIBUTE } from './table';
import type { TransactItem } from './transact';

export interface IdempotencyRecord {
  /** SHA-256 of the canonical request (amount in minor units, currency, … and the user for charges). */
  fingerprint: string;
  statusCode: number;
  /** The exact response body sent the first time. */
  body: string;
}

/** Builds the Put for a new record: succeeds when no live record exists (TTL deletion lags, so
 * an expired record still present counts as absent). On failure the old record comes back. */
export function idempotencyPut(scope: string, key: string, record: IdempotencyRecord, now: Date): TransactItem {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  return {
    Put: {
      TableName: config().TABLE_NAME,
      Item: {
        ...keys.idempotency(scope, key),
        type: 'Idempotency',
        ...record,
        createdAt: now.toISOString(),
        [TTL_ATTRIBUTE]: nowSeconds + config().IDEMPOTENCY_TTL_SECONDS,
      },
      ConditionExpression: 'attribute_not_exists(PK) OR #ttl < :now',
      ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: { ':now': nowSeconds },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** Reads a live record (strongly consistent); undefined when absent or expired. */
export async function getIdempotencyRecord(scope: string, key: string, now: Date): Promise<IdempotencyRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.idempotency(scope, key), ConsistentRead: true }));
  return toRecord(out.Item, now);
}

/** Interprets an item returned by a failed condition (or a read) as a live record. */
export function toRecord(item: Record<string, unknown> | undefined, now: Date): IdempotencyRecord | undefined {
  if (!item) return undefined;
  if (typeof item[TTL_ATTRIBUTE] === 'number' && (item[TTL_ATTRIBUTE] as number) < Math.floor(now.getTime() / 1000)) {
    return undefined;
  }
  return { fingerprint: String(item.fingerprint), statusCode: Number(item.statusCode), body: String(item.body) };
}
