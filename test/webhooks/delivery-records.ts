/**
 * "Nothing else arrived", proven from the records the service keeps instead of by waiting a while.
 *
 * What can reach an endpoint is fixed by three records:
 * - the outbox (store/events/outbox.ts): every event a state change reported, written in the change's own
 *   transaction, so an event that exists is there as soon as the change answered; a new charge's
 *   events are in its own INSERT stream record instead (DESIGN §18), read here as the dispatcher
 *   reads them (its `eventsOf`);
 * - for agent.enabled / agent.disabled, the agent item's own stream records (the dispatcher's outbox
 *   for those, functions/webhooks/dispatcher.ts): the events the dispatcher makes of them are what
 *   its `eventsOf` makes of them;
 * - the delivery worker's counter per (endpoint, event) (`WHATTEMPTS#`, store/events/webhook-delivery.repository.ts):
 *   every attempt is counted before its send, and once `deliveredAt` is set no further attempt is
 *   counted, so none is sent. Read then, `attempts` is every send there will ever be for that pair,
 *   and the partition lists every event the worker ever began to deliver to the endpoint.
 * A dead delivery sets no `deliveredAt`; for it the proof is the delivery queue holding nothing
 * (no message visible, in flight or delayed), so nothing is left that could be sent again.
 */
import { type AttributeValue, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { QueryCommand, ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import { storedEvents } from '../../functions/store/events/outbox';
import { keys } from '../../functions/store/table';
import { type ChangeRecord, eventsOf } from '../../functions/webhooks/dispatcher';
import { matchesDispatchFilter } from '../../functions/webhooks/stream-filter';
import { eventually } from '../support/eventually';
import { queueDrained } from '../support/queues';
import type { TestStack } from '../support/stack';

/** One event as the outbox holds it, its body parsed. */
export interface OutboxEntry {
  id: string;
  type: string;
  /** `agent#<id>` or `user#<id>`. */
  owner: string;
  webhookId?: string;
  data: Record<string, unknown>;
}

/**
 * Every event in the outbox of this file's table, in commit order (read consistently): the outbox
 * items' events and the events the dispatcher derives from new charge items' INSERT stream records.
 */
export async function outboxEvents(): Promise<OutboxEntry[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out: ScanCommandOutput = await db().send(
      new ScanCommand({ TableName: config().TABLE_NAME, ConsistentRead: true, ...(start ? { ExclusiveStartKey: start } : {}) }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  const fromOutbox = items.flatMap(storedEvents);
  const fromCharges = (await streamRecords())
    .filter((r) => r.eventName === 'INSERT' && r.dynamodb?.NewImage?.type?.S === 'Charge')
    .flatMap((r) => eventsOf(asLambdaRecord(r)));
  return [...fromOutbox, ...fromCharges]
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
    .map((e) => ({
      id: e.id,
      type: e.type,
      owner: e.owner,
      ...(e.webhookId ? { webhookId: e.webhookId } : {}),
      data: (JSON.parse(e.body) as { data: Record<string, unknown> }).data,
    }));
}

/** The outbox's events for `owner` (`agent#…`/`user#…`) about the object `id` (their data's id), as [type, event id]. */
export async function outboxAbout(owner: string, id: string): Promise<[string, string][]> {
  return (await outboxEvents()).filter((e) => e.owner === owner && e.data.id === id).map((e) => [e.type, e.id]);
}

interface Counter {
  attempts: number;
  deliveredAt?: string;
}

/** The delivery worker's counters for one endpoint, by event id: every event it began to deliver there. */
export async function attemptCounters(webhookId: string): Promise<Record<string, Counter>> {
  const { PK } = keys.webhookAttempts(webhookId, '');
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': PK },
      ConsistentRead: true,
    }),
  );
  return Object.fromEntries(
    (out.Items ?? []).map((item) => [
      String(item.SK),
      { attempts: Number(item.attempts), ...(typeof item.deliveredAt === 'string' ? { deliveredAt: item.deliveredAt } : {}) },
    ]),
  );
}

/**
 * Waits until each of `eventIds` has reached the endpoint (its counter has `deliveredAt`), then
 * returns how often each event the worker ever began to deliver there was attempted. From then on
 * these numbers cannot grow: the answer is final, not a snapshot.
 */
export async function finalAttempts(webhookId: string, eventIds: readonly string[], timeoutMs = 10_000): Promise<Record<string, number>> {
  const counters = await eventually(
    `events ${eventIds.join(', ')} delivered to ${webhookId}`,
    async () => {
      const now = await attemptCounters(webhookId);
      const waiting = eventIds.filter((id) => now[id]?.deliveredAt === undefined);
      if (waiting.length > 0) throw new Error(`not yet delivered: ${waiting.join(', ')}; counters ${JSON.stringify(now)}`);
      return now;
    },
    { timeoutMs },
  );
  return Object.fromEntries(Object.entries(counters).map(([id, c]) => [id, c.attempts]));
}

/** Waits until the webhook delivery queue holds no message: none visible, in flight or delayed. */
export function deliveryQueueDrained(t: TestStack, timeoutMs = 15_000): Promise<void> {
  return queueDrained(t.stack.webhooks.queueUrl, 'webhook delivery queue', timeoutMs);
}

/**
 * The events the dispatcher makes of one item's stream records (the table's stream, every shard,
 * from its oldest record): the records its filter lets through, through its own `eventsOf`, as
 * the local poller hands them over. For an agent item these are all the agent.enabled /
 * agent.disabled events there will ever be for the changes made so far.
 */
export async function dispatchedFromStream(key: { PK: string; SK: string }): Promise<{
  /** The item after each change, oldest first. */
  images: Record<string, unknown>[];
  events: { id: string; type: string; createdAt: string; roughTime?: boolean }[];
}> {
  const records = await streamRecords();
  const mine = records.filter((r) => r.dynamodb?.Keys?.PK?.S === key.PK && r.dynamodb?.Keys?.SK?.S === key.SK);
  return {
    images: mine.map((r) => unmarshall((r.dynamodb?.NewImage ?? {}) as Record<string, AttributeValue>)),
    events: mine
      .filter((r) => matchesDispatchFilter(r as Parameters<typeof matchesDispatchFilter>[0]))
      .flatMap((r) => eventsOf(asLambdaRecord(r)))
      .map((e) => ({ id: e.id, type: e.type, createdAt: e.createdAt, ...(e.roughTime ? { roughTime: true } : {}) })),
  };
}

/** Every record of this file's table's stream, every shard, from its oldest record. */
async function streamRecords(): Promise<StreamRecord[]> {
  const endpoint = config().DYNAMODB_ENDPOINT;
  const options = { region: 'us-east-1', endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  const dynamo = new DynamoDBClient(options);
  const streams = new DynamoDBStreamsClient(options);
  try {
    const table = await dynamo.send(new DescribeTableCommand({ TableName: config().TABLE_NAME }));
    const streamArn = table.Table?.LatestStreamArn;
    if (!streamArn) throw new Error(`table ${config().TABLE_NAME} has no stream`);
    const described = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    const records: StreamRecord[] = [];
    for (const shard of described.StreamDescription?.Shards ?? []) {
      const it = await streams.send(
        new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shard.ShardId, ShardIteratorType: 'TRIM_HORIZON' }),
      );
      let iterator = it.ShardIterator;
      // Page to the shard's end: a closed shard has no next iterator, an open one answers an empty page.
      while (iterator) {
        const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
        const got = page.Records ?? [];
        records.push(...got);
        iterator = got.length > 0 ? page.NextShardIterator : undefined;
      }
    }
    return records;
  } finally {
    dynamo.destroy();
    streams.destroy();
  }
}

/** As the local poller and Lambda hand a record to the dispatcher: the creation time in epoch seconds. */
function asLambdaRecord(record: StreamRecord): ChangeRecord {
  const at = record.dynamodb?.ApproximateCreationDateTime;
  return {
    ...record,
    dynamodb: { ...record.dynamodb, ApproximateCreationDateTime: at instanceof Date ? at.getTime() / 1000 : at },
  } as ChangeRecord;
}
