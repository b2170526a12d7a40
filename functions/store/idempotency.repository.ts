/**
 * Idempotency records. A record is written in the SAME TransactWriteItems as the money movement
 * it answers for, so no crash can leave a debit without its record (docs/idempotency.md).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { IdempotencyRecordExistsError } from '../core/errors';
import type { IdempotencyRecord, IdempotencyWrite } from '../core/idempotency';
import { db } from './client';
import { keys, TTL_ATTRIBUTE } from './table';
import { type NamedItem, named, PRECEDENCE } from './transact';

/**
 * Builds the Put for a new record: succeeds when no live record exists (TTL deletion lags, so
 * an expired record still present counts as absent). Failed, it means a replay (or a concurrent
 * twin): IdempotencyRecordExistsError carrying the record DynamoDB handed back, before any other
 * refusal of the same transaction.
 */
export function idempotencyPut(write: IdempotencyWrite, now: Date): NamedItem {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const item = {
    Put: {
      TableName: config().TABLE_NAME,
      Item: {
        ...keys.idempotency(write.scope, write.key),
        type: 'Idempotency',
        ...write.record,
        createdAt: now.toISOString(),
        [TTL_ATTRIBUTE]: nowSeconds + config().IDEMPOTENCY_TTL_SECONDS,
      },
      ConditionExpression: 'attribute_not_exists(PK) OR #ttl < :now',
      ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: { ':now': nowSeconds },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
    },
  };
  return named(item, {
    onConditionFailed: (old) => new IdempotencyRecordExistsError(toRecord(old, now)),
    precedence: PRECEDENCE.replay,
  });
}

/** Reads a live record (strongly consistent); undefined when absent or expired. */
export async function getIdempotencyRecord(scope: string, key: string, now: Date): Promise<IdempotencyRecord | undefined> {
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.idempotency(scope, key), ConsistentRead: true }));
  return toRecord(out.Item, now);
}

/** Interprets a stored item as a live record; undefined when absent or past its TTL. */
function toRecord(item: Record<string, unknown> | undefined, now: Date): IdempotencyRecord | undefined {
  if (!item) return undefined;
  if (typeof item[TTL_ATTRIBUTE] === 'number' && (item[TTL_ATTRIBUTE] as number) < Math.floor(now.getTime() / 1000)) {
    return undefined;
  }
  return { fingerprint: String(item.fingerprint), statusCode: Number(item.statusCode), body: String(item.body) };
}
