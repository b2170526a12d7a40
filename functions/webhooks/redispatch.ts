/**
 * Re-dispatch from the outbox: the outbox items created in a time range go through the stream
 * dispatcher's own code again (`dispatchRecords`), as the INSERT records the table stream handed it
 * the first time, so each event becomes one delivery message per endpoint that would have had it
 * then (subscribed to its type, registered no later than the event). For events the stream
 * dispatcher never handled: a batch it gave up on after its retries (its record is in the stream
 * on-failure queue, lib/webhook-pipeline.ts), or records the stream dropped after 24 h.
 *
 * Running it over events that were delivered already is safe: the delivery worker sends an event
 * to an endpoint once (functions/webhooks/delivery.ts, `duplicate`), so a range may be generous.
 * An event whose delivery went `dead` is tried once more.
 *
 * A new charge's events have no outbox item (its own INSERT record carried them, DESIGN §18): the
 * charge items created in the range that nothing has changed since are re-dispatched as that
 * INSERT, which gives the same events, ids and bytes (store/events/outbox.ts `scanOutboxPages`).
 *
 * What it cannot re-dispatch: agent.enabled / agent.disabled, which come from the agent item's own
 * stream record and are kept nowhere else; the creation events of a charge changed since (approved,
 * settled or refunded: its later events are in outbox items and are re-dispatched); and outbox items
 * older than OUTBOX_TTL_SECONDS (7 days).
 */
import { type DeliveryMessage, sendDeliveryMessages } from '../queue/webhook-queue';
import { CHARGE_ITEM_TYPE, scanOutboxPages } from '../store/events/outbox';
import { imageOfItem } from '../store/stream-image';
import { type ChangeRecord, dispatchRecords, eventsOf } from './dispatcher';

/** Records per dispatcher call, as the stream event source mapping hands them (lib/webhook-pipeline.ts). */
const BATCH = 100;

export interface RedispatchOptions {
  from: Date;
  to: Date;
  /** Parallel Scan segments (1 by default). */
  segments?: number;
  /** Count what would be sent; send nothing. */
  dryRun?: boolean;
  /** Where messages go (the delivery queue by default). */
  send?: (messages: readonly DeliveryMessage[]) => Promise<void>;
}

export interface RedispatchReport {
  from: string;
  to: string;
  dryRun: boolean;
  /** Items the Scan read (the whole table's, whatever the range). */
  scanned: number;
  outboxItems: number;
  /** Charge items re-dispatched as their INSERT (their creation events). */
  chargeItems: number;
  events: number;
  /** Delivery messages sent (or, dry, that would be). */
  messages: number;
  /** The item the dispatcher stopped at; items after it in its page were not dispatched. Running again is safe. */
  failed?: { outboxKey: string; createdAt: string; error: string };
}

/** Re-dispatches the outbox items created in [from, to). Stops at the first item it cannot dispatch. */
export async function redispatchOutbox(opts: RedispatchOptions): Promise<RedispatchReport> {
  const report: RedispatchReport = {
    from: opts.from.toISOString(),
    to: opts.to.toISOString(),
    dryRun: opts.dryRun ?? false,
    scanned: 0,
    outboxItems: 0,
    chargeItems: 0,
    events: 0,
    messages: 0,
  };
  const deliver = opts.send ?? sendDeliveryMessages;
  let lastError = '';
  const send = async (messages: readonly DeliveryMessage[]) => {
    try {
      if (!opts.dryRun) await deliver(messages);
    } catch (error) {
      lastError = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      throw error;
    }
    report.messages += messages.length;
  };
  const segments = opts.segments ?? 1;

  const runSegment = async (segment: number) => {
    for await (const page of scanOutboxPages({ from: opts.from, to: opts.to, segment, totalSegments: segments })) {
      report.scanned += page.scanned;
      // Within a page in commit order; across pages and segments order is not kept (nor promised: docs/webhooks.md).
      const items = [...page.items].sort((a, b) => String(a.createdAt).localeCompare(String(b.createdAt)));
      for (let i = 0; i < items.length && !report.failed; i += BATCH) {
        const records = items.slice(i, i + BATCH).map(asStreamRecord);
        const failedAt = await dispatchRecords(records, { send });
        const stoppedAt = failedAt === undefined ? records.length : records.findIndex((r) => r.dynamodb?.SequenceNumber === failedAt);
        const done = records.slice(0, Math.max(0, stoppedAt));
        const charges = done.filter((r) => r.eventID?.startsWith(CHARGE_RECORD)).length;
        report.chargeItems += charges;
        report.outboxItems += done.length - charges;
        report.events += done.reduce((n, r) => n + eventsOf(r).length, 0);
        if (failedAt !== undefined) {
          const item = items.find((it) => recordKey(it) === failedAt);
          report.failed = { outboxKey: failedAt, createdAt: String(item?.createdAt), error: lastError || 'see the log (LOG_LEVEL=INFO)' };
        }
      }
      if (report.failed) return;
    }
  };
  await Promise.all(Array.from({ length: segments }, (_, segment) => runSegment(segment)));
  return report;
}

const CHARGE_RECORD = 'redispatch-charge:';

/** Which item a record stands for: an outbox item's PK (unique), a charge's PK and SK. */
const recordKey = (item: Record<string, unknown>): string =>
  item.type === CHARGE_ITEM_TYPE ? `${String(item.PK)}/${String(item.SK)}` : String(item.PK);

/** An item as the stream's INSERT record of it (the item's key stands for the sequence number). */
function asStreamRecord(item: Record<string, unknown>): ChangeRecord {
  return {
    eventID: `${item.type === CHARGE_ITEM_TYPE ? CHARGE_RECORD : 'redispatch:'}${recordKey(item)}`,
    eventName: 'INSERT',
    dynamodb: {
      NewImage: imageOfItem(item),
      SequenceNumber: recordKey(item),
    },
  };
}
