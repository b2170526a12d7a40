/**
 * Which stream records reach the dispatcher: new outbox items, new charge items (their own record
 * is the outbox of their creation events, DESIGN §18), modified agent items (their `enabled`
 * may have changed) and modified grants (their counters: limit alerts, DESIGN §27). The same patterns are the event source mapping's filter criteria
 * on AWS (lib/webhook-pipeline.ts) and the local poller's filter (bin/local/webhook-pipeline.ts),
 * so Lambda is never invoked for the table's other writes.
 */
import { CHARGE_ITEM_TYPE, OUTBOX_ITEM_TYPE } from '../store/events/outbox';

export const DISPATCH_FILTER_PATTERNS = [
  { eventName: ['INSERT'], dynamodb: { NewImage: { type: { S: [OUTBOX_ITEM_TYPE] } } } },
  { eventName: ['INSERT'], dynamodb: { NewImage: { type: { S: [CHARGE_ITEM_TYPE] } } } },
  { eventName: ['MODIFY'], dynamodb: { NewImage: { type: { S: ['Agent'] } } } },
  // A grant's counters moved: its limit alerts (use-cases/events/grant-alerts.ts).
  { eventName: ['MODIFY'], dynamodb: { NewImage: { type: { S: ['Grant'] } } } },
] as const;

/** The local equivalent of the filter: whether a stream record matches one of the patterns. */
export function matchesDispatchFilter(record: { eventName?: string; dynamodb?: { NewImage?: Record<string, unknown> } }): boolean {
  const type = (record.dynamodb?.NewImage?.type as { S?: string } | undefined)?.S;
  return DISPATCH_FILTER_PATTERNS.some(
    (p) => (p.eventName as readonly string[]).includes(record.eventName ?? '') && p.dynamodb.NewImage.type.S[0] === type,
  );
}
