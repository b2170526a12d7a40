/**
 * Which stream records reach the kill-switch fan-out: agent items written (an operator's edit in
 * the console, registration, a rotation's new item) or removed (a rotation's old item, a deletion
 * by hand). The same patterns are the event source mapping's filter criteria on AWS
 * (lib/kill-switch-fanout.ts) and the local poller's filter (bin/local/kill-switch-fanout.ts).
 */
export const AGENT_ITEM_TYPE = 'Agent';

export const FANOUT_FILTER_PATTERNS = [
  { eventName: ['INSERT', 'MODIFY'], dynamodb: { NewImage: { type: { S: [AGENT_ITEM_TYPE] } } } },
  { eventName: ['REMOVE'], dynamodb: { OldImage: { type: { S: [AGENT_ITEM_TYPE] } } } },
] as const;

type Image = Record<string, unknown> | undefined;

/** The local equivalent of the filter: whether a stream record matches one of the patterns. */
export function matchesFanOutFilter(record: { eventName?: string; dynamodb?: { NewImage?: Image; OldImage?: Image } }): boolean {
  const typeOf = (image: Image) => (image?.type as { S?: string } | undefined)?.S;
  if (record.eventName === 'REMOVE') return typeOf(record.dynamodb?.OldImage) === AGENT_ITEM_TYPE;
  return (record.eventName === 'INSERT' || record.eventName === 'MODIFY') && typeOf(record.dynamodb?.NewImage) === AGENT_ITEM_TYPE;
}
