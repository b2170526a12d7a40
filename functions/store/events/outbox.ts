/**
 * The transactional outbox. A state change that reports events appends ONE more item to its own
 * TransactWriteItems: this Put, holding every event the change produced (for the agent and/or the
 * user). The events exist exactly when the change committed; DynamoDB Streams (locally a poller over
 * DynamoDB Local's stream) hands the new item to the dispatcher (functions/webhooks/dispatcher.ts).
 *
 * Each event's body is serialized here, once, to the exact bytes receivers get and signatures
 * cover: `{id, type, createdAt, data}` (DESIGN §15).
 */
import { PutCommand, ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import { stringify } from 'lossless-json';
import { config } from '../../config';
import { eventEnvelope, type OutboxEvent, ownerKey } from '../../core/events';
import { db } from '../client';
import { keys } from '../table';
import type { TransactEntry, TransactItem } from '../transact';

/** Outbox items outlive the stream (24 h) by days, for operators tracing an event. */
export const OUTBOX_TTL_SECONDS = 7 * 86_400;
/** The item type the stream filter selects (lib/webhook-pipeline.ts, bin/local/webhook-pipeline.ts). */
export const OUTBOX_ITEM_TYPE = 'Outbox';
/** A charge item's type: its INSERT record is the outbox of its creation events (webhooks/dispatcher.ts). */
export const CHARGE_ITEM_TYPE = 'Charge';

/** One event as stored in an outbox item. */
export interface StoredEvent {
  id: string;
  type: string;
  createdAt: string;
  /** `agent#<id>` or `user#<id>`. */
  owner: string;
  /** Only this endpoint (a `ping`). */
  webhookId?: string;
  /** The JSON body sent, exactly. */
  body: string;
}

/** The JSON body of an event, exactly as delivered and signed. */
export const eventBody = (event: OutboxEvent): string => stringify(eventEnvelope(event)) ?? '{}';

/**
 * The outbox Put for a state change's transaction, or undefined when it produced no event (append
 * nothing then). All events of one change go in one item, so a change costs one item at most.
 */
export function outboxPut(events: readonly OutboxEvent[], now: Date = new Date()): TransactItem | undefined {
  const first = events[0];
  if (!first) return undefined;
  const stored: StoredEvent[] = events.map((e) => ({
    id: e.id,
    type: e.type,
    createdAt: e.createdAt,
    owner: ownerKey(e.owner),
    ...(e.webhookId ? { webhookId: e.webhookId } : {}),
    body: eventBody(e),
  }));
  return {
    Put: {
      TableName: config().TABLE_NAME,
      Item: {
        ...keys.outbox(first.id),
        type: OUTBOX_ITEM_TYPE,
        createdAt: now.toISOString(),
        events: stored,
        ttl: Math.floor(now.getTime() / 1000) + OUTBOX_TTL_SECONDS,
      },
    },
  };
}

/** Appends the outbox Put to a transaction's items when there is one (the common call site). */
export function withOutbox<T>(items: readonly TransactEntry<T>[], events: readonly OutboxEvent[], now?: Date): TransactEntry<T>[] {
  const put = outboxPut(events, now);
  return put ? [...items, put] : [...items];
}

/** Writes events that report no state change of their own (the test endpoint's `ping`) on their own. */
export async function appendOutbox(events: readonly OutboxEvent[], now: Date = new Date()): Promise<void> {
  const put = outboxPut(events, now)?.Put;
  if (put) await db().send(new PutCommand({ TableName: put.TableName, Item: put.Item }));
}

/** The events of an outbox item read back from a stream image; invalid entries are skipped. */
export function storedEvents(item: Record<string, unknown>): StoredEvent[] {
  if (item.type !== OUTBOX_ITEM_TYPE || !Array.isArray(item.events)) return [];
  return item.events.filter(
    (e): e is StoredEvent =>
      typeof e === 'object' &&
      e !== null &&
      typeof (e as StoredEvent).id === 'string' &&
      typeof (e as StoredEvent).type === 'string' &&
      typeof (e as StoredEvent).createdAt === 'string' &&
      typeof (e as StoredEvent).owner === 'string' &&
      typeof (e as StoredEvent).body === 'string',
  );
}

/** The key prefix of every outbox item (`keys.outbox`). */
const OUTBOX_PK_PREFIX = 'OUTBOX#';

/**
 * Outbox items created in [from, to), with the charge items created then whose creation events
 * their own INSERT record carried (no outbox item, DESIGN §18) and that nothing has changed since
 * (no `approvedAt`, `settledAt`, `refundedAt`: every later change of a charge sets one), so the
 * dispatcher derives from them exactly the events, ids and bytes of that INSERT. Page by page (one
 * Scan page at a time; `segment` of `totalSegments` for a parallel scan). There is no index on
 * outbox items by time, and giving every outbox item an index entry would add write units to every
 * charge: this reads the whole table (eventually consistent, 0.5 read units per 4 KB scanned) and
 * is for an operator's re-dispatch (bin/operator/redispatch.ts), never a request path. Outbox items
 * live OUTBOX_TTL_SECONDS.
 */
export async function* scanOutboxPages(opts: {
  from: Date;
  to: Date;
  segment?: number;
  totalSegments?: number;
}): AsyncGenerator<{ items: Record<string, unknown>[]; scanned: number }> {
  const segments = opts.totalSegments ?? 1;
  let start: Record<string, unknown> | undefined;
  do {
    const out: ScanCommandOutput = await db().send(
      new ScanCommand({
        TableName: config().TABLE_NAME,
        // ISO-8601 UTC strings (toISOString) compare in time order.
        FilterExpression:
          'createdAt >= :from AND createdAt < :to AND ((begins_with(PK, :prefix) AND #type = :type) OR ' +
          '(#type = :charge AND attribute_not_exists(approvedAt) AND attribute_not_exists(settledAt) AND attribute_not_exists(refundedAt)))',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: {
          ':prefix': OUTBOX_PK_PREFIX,
          ':type': OUTBOX_ITEM_TYPE,
          ':charge': CHARGE_ITEM_TYPE,
          ':from': opts.from.toISOString(),
          ':to': opts.to.toISOString(),
        },
        ...(segments > 1 ? { Segment: opts.segment ?? 0, TotalSegments: segments } : {}),
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    yield { items: out.Items ?? [], scanned: out.ScannedCount ?? 0 };
    start = out.LastEvaluatedKey;
  } while (start);
}
