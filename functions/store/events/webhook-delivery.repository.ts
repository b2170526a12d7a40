/**
 * Delivery attempts: one item per attempt at delivering one event to one endpoint, in the
 * endpoint's partition sorted by a ULID (time order), kept DELIVERY_TTL_DAYS then removed by TTL.
 * The deliveries list reads the newest ones in one Query.
 */
import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import { newRecordId } from '../../core/ids';
import type { DeliveryAttempt, DeliveryStatus } from '../../core/webhooks';
import { db } from '../client';
import { keys } from '../table';
import { conditionalWrite, outcome } from '../transact';

export const DELIVERY_TTL_DAYS = 30;

/**
 * Counts an attempt before it is made and returns its number (1 = first). Counted first, so an
 * attempt whose worker died after sending still counts, and the schedule always ends.
 *
 * Answers `undefined`, counting nothing, once the event has reached this endpoint (`deliveredAt`,
 * set by `markDelivered`): a second message for the same (endpoint, event) is then not sent. Such a
 * message comes from a stream batch the dispatcher handles again, or an operator's re-dispatch.
 */
export async function nextAttemptNumber(webhookId: string, eventId: string, now: Date): Promise<number | undefined> {
  const result = await conditionalWrite(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.webhookAttempts(webhookId, eventId),
        UpdateExpression: 'ADD attempts :one SET #type = :type, #ttl = :ttl',
        // Not yet delivered to this endpoint (a missing item has no deliveredAt either).
        ConditionExpression: 'attribute_not_exists(deliveredAt)',
        ExpressionAttributeNames: { '#type': 'type', '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':one': 1,
          ':type': 'WebhookAttempts',
          ':ttl': Math.floor(now.getTime() / 1000) + DELIVERY_TTL_DAYS * 86_400,
        },
        ReturnValues: 'UPDATED_NEW',
      },
    },
    () => outcome('delivered'),
  );
  return result.committed ? Number(result.attributes?.attempts ?? 1) : undefined;
}

/**
 * Notes on the (endpoint, event) counter that a 2xx came back: from now on `nextAttemptNumber`
 * refuses further attempts. The counter lives DELIVERY_TTL_DAYS, longer than the outbox item a
 * re-dispatch reads (OUTBOX_TTL_SECONDS), so no re-dispatch outlives the note.
 */
export async function markDelivered(webhookId: string, eventId: string, at: Date): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: config().TABLE_NAME,
      Key: keys.webhookAttempts(webhookId, eventId),
      UpdateExpression: 'SET deliveredAt = if_not_exists(deliveredAt, :at)',
      ExpressionAttributeValues: { ':at': at.toISOString() },
    }),
  );
}

/** Records one attempt; returns it with its id. */
export async function recordDeliveryAttempt(attempt: Omit<DeliveryAttempt, 'id'>): Promise<DeliveryAttempt> {
  const id = newRecordId();
  const stored: DeliveryAttempt = { id, ...attempt };
  await db().send(
    new PutCommand({
      TableName: config().TABLE_NAME,
      Item: {
        ...keys.webhookDelivery(attempt.webhookId, id),
        ...stored,
        // `type` is the item's kind in this table; the event's type is kept as eventType.
        type: 'WebhookDelivery',
        eventType: attempt.type,
        ttl: Math.floor(Date.parse(attempt.createdAt) / 1000) + DELIVERY_TTL_DAYS * 86_400,
      },
    }),
  );
  return stored;
}

/** The endpoint's most recent attempts, newest first. */
export async function listDeliveryAttempts(webhookId: string, limit: number): Promise<DeliveryAttempt[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': keys.webhookDeliveryPartition(webhookId) },
      ScanIndexForward: false,
      ConsistentRead: true,
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map(toAttempt);
}

function toAttempt(item: Record<string, unknown>): DeliveryAttempt {
  return {
    id: String(item.id),
    webhookId: String(item.webhookId),
    eventId: String(item.eventId),
    type: String(item.eventType),
    attempt: Number(item.attempt),
    status: item.status as DeliveryStatus,
    ...(typeof item.statusCode === 'number' ? { statusCode: item.statusCode } : {}),
    ...(typeof item.error === 'string' ? { error: item.error } : {}),
    createdAt: String(item.createdAt),
    durationMs: Number(item.durationMs ?? 0),
    ...(typeof item.nextAttemptAt === 'string' ? { nextAttemptAt: item.nextAttemptAt } : {}),
  };
}
