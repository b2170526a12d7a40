/**
 * The dispatcher: turns committed changes into delivery messages. It reads stream records of the
 * table (DynamoDB Streams on AWS, a poller over DynamoDB Local's stream in `npm start`), filtered
 * to two kinds:
 * - a new outbox item (store/events/outbox.ts): its events, written in the same transaction as the
 *   change they report;
 * - a new charge item: its creation events (charge.succeeded, charge.failed, charge.pending),
 *   derived from the item alone (use-cases/events/events.ts `chargeRecordEvents`) with ids from the
 *   charge id and type, so a re-processed record sends the same `webhook-id` and the same bytes.
 *   The charge's transaction writes no outbox item for them (DESIGN §18);
 * - an agent item whose `enabled` changed (old vs new image): agent.enabled / agent.disabled.
 *   The item's own stream record is the outbox here, so an operator's flip in the DynamoDB console
 *   and the admin PATCH are reported alike. Its event id derives from the stream record id, so a
 *   re-processed batch sends the same `webhook-id`.
 * An event of a settled movement (charge.succeeded, charge.refunded, x402.purchase.succeeded,
 * x402.payment.settled, x402.payment.refunded, payout.completed, topup.completed) gets its `receipt` here, signed once
 * for all the endpoints that hear it, and only when one does (DESIGN §27).
 * Each event becomes one SQS message per endpoint of its owner subscribed to its type and
 * registered no later than the event was created (an endpoint hears what happens after it
 * exists, as on Stripe; a `ping` names its endpoint). Records
 * are handled in order; the first failure stops the batch and is reported (stream partial batch
 * failure), so the stream retries from there: at least once, duplicates allowed.
 */
import { agentView } from '../contracts/views';
import { derivedEventId, type OutboxEvent, ownerKey } from '../core/events';
import { logger } from '../observability/logger';
import { type DeliveryMessage, sendDeliveryMessages } from '../queue/webhook-queue';
import { eventBody, type StoredEvent, storedEvents } from '../store/events/outbox';
import { listWebhooks, type StoredWebhook } from '../store/events/webhook.repository';
import { toAgent } from '../store/identity/agent.repository';
import { itemOfImage } from '../store/stream-image';
import { chargeRecordEvents } from '../use-cases/events/events';
import { sendGrantAlerts } from '../use-cases/events/grant-alerts';
import { carriesReceipt, eventReceipt, withReceipt } from '../use-cases/receipts/event-receipts';

/** The parts of a stream record the dispatcher reads (Lambda's DynamoDBRecord and the local poller's alike). */
export interface ChangeRecord {
  eventID?: string;
  eventName?: 'INSERT' | 'MODIFY' | 'REMOVE' | string;
  dynamodb?: {
    ApproximateCreationDateTime?: number | Date;
    NewImage?: Record<string, unknown>;
    OldImage?: Record<string, unknown>;
    SequenceNumber?: string;
  };
}

export interface DispatchDeps {
  send?: (messages: readonly DeliveryMessage[]) => Promise<void>;
}

/** Dispatches records in order; returns the sequence number of the first that failed, if any. */
export async function dispatchRecords(records: readonly ChangeRecord[], deps: DispatchDeps = {}): Promise<string | undefined> {
  const send = deps.send ?? sendDeliveryMessages;
  const endpoints = new Map<string, StoredWebhook[]>();
  const endpointsOf = async (owner: string) => {
    let found = endpoints.get(owner);
    if (!found) {
      found = await listWebhooks(owner);
      endpoints.set(owner, found);
    }
    return found;
  };
  // Look up the batch's owners side by side first (a busy batch names many users, each one Query);
  // a lookup that fails here is simply tried again, in order, at its record below.
  await prefetch(records, endpointsOf);
  for (const record of records) {
    try {
      await alertsOf(record);
      const messages: DeliveryMessage[] = [];
      for (const event of eventsOf(record)) {
        const wanting = (await endpointsOf(event.owner)).filter((endpoint) =>
          event.webhookId
            ? endpoint.id === event.webhookId
            : endpoint.events.includes(event.type) && (event.roughTime || endpoint.createdAt <= event.createdAt),
        );
        if (wanting.length === 0) continue;
        // A settled movement's event carries its receipt, signed here once for all its endpoints
        // (use-cases/receipts/event-receipts.ts): never in the movement's own transaction.
        const body = carriesReceipt(event.type) ? withReceipt(event.body, await eventReceipt(event)) : event.body;
        for (const endpoint of wanting) {
          messages.push({ webhookId: endpoint.id, owner: event.owner, eventId: event.id, type: event.type, body });
        }
      }
      if (messages.length > 0) await send(messages);
    } catch (error) {
      logger().error('webhook dispatch failed; the stream retries from this record', {
        sequenceNumber: record.dynamodb?.SequenceNumber,
        error: error instanceof Error ? error.message : String(error),
      });
      return record.dynamodb?.SequenceNumber ?? '';
    }
  }
  return undefined;
}

/**
 * A grant's limit alerts (use-cases/events/grant-alerts.ts): written to the outbox, once per window,
 * before the record's own events; a failure stops the batch here, as any other, and the retried
 * record asks again (the marker lets one through).
 */
async function alertsOf(record: ChangeRecord): Promise<void> {
  const image = record.dynamodb?.NewImage;
  if (!image) return;
  const old = record.dynamodb?.OldImage;
  await sendGrantAlerts({
    ...(record.eventName !== undefined ? { eventName: record.eventName } : {}),
    item: itemOfImage(image),
    ...(old ? { old: itemOfImage(old) } : {}),
  });
}

/** Owners' endpoint lookups in parallel, at most this many at a time. */
const PREFETCH_CONCURRENCY = 16;

async function prefetch(records: readonly ChangeRecord[], endpointsOf: (owner: string) => Promise<unknown>): Promise<void> {
  const ownersOf = (record: ChangeRecord): string[] => {
    try {
      return eventsOf(record).map((event) => event.owner);
    } catch {
      return []; // reported, in order, by the loop that follows
    }
  };
  const owners = [...new Set(records.flatMap(ownersOf))];
  let next = 0;
  const worker = async () => {
    while (next < owners.length) {
      const owner = owners[next++] as string;
      await endpointsOf(owner).catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PREFETCH_CONCURRENCY, owners.length) }, worker));
}

/** The events one stream record carries (none for records the filter should not have let through). */
export function eventsOf(record: ChangeRecord): (StoredEvent & { roughTime?: boolean })[] {
  const image = record.dynamodb?.NewImage;
  if (!image) return [];
  const item = itemOfImage(image);
  if (record.eventName === 'INSERT' && item.type === 'Charge') return chargeRecordEvents(item).map(stored);
  if (record.eventName === 'INSERT') return storedEvents(item);
  if (record.eventName === 'MODIFY' && item.type === 'Agent' && record.dynamodb?.OldImage) {
    const old = itemOfImage(record.dynamodb.OldImage);
    const before = toAgent(old);
    const after = toAgent(item);
    if (before.enabled === after.enabled) return [];
    // The admin route dates the change on the item; a console edit is dated by the stream record.
    const stamped = typeof item.enabledChangedAt === 'string' && item.enabledChangedAt !== old.enabledChangedAt;
    const at = stamped ? new Date(String(item.enabledChangedAt)) : changeTime(record);
    const event: OutboxEvent = {
      id: derivedEventId(record.eventID ?? `${after.id}|${at.toISOString()}`, at),
      type: after.enabled ? 'agent.enabled' : 'agent.disabled',
      createdAt: at.toISOString(),
      owner: { kind: 'agent', id: after.id },
      data: agentView(after),
    };
    return [
      {
        id: event.id,
        type: event.type,
        createdAt: event.createdAt,
        owner: `agent#${after.id}`,
        body: eventBody(event),
        // The stream's time is approximate (whole seconds on AWS): not precise enough to tell
        // whether an endpoint registered the same moment came first, so every endpoint hears it.
        ...(stamped ? {} : { roughTime: true }),
      },
    ];
  }
  return [];
}

/** An event as the dispatcher sends it: its owner's key and its exact body. */
function stored(event: OutboxEvent): StoredEvent {
  return { id: event.id, type: event.type, createdAt: event.createdAt, owner: ownerKey(event.owner), body: eventBody(event) };
}

function changeTime(record: ChangeRecord): Date {
  const at = record.dynamodb?.ApproximateCreationDateTime;
  if (at instanceof Date) return at;
  // Lambda gives epoch seconds.
  return typeof at === 'number' ? new Date(at * 1000) : new Date();
}
