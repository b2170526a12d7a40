/**
 * The webhook pipeline on one machine, the same path as on AWS (docs/webhooks.md):
 *
 *   table stream (DynamoDB Local) ──poller──▶ dispatcher handler ──▶ local SQS webhook queue
 *        ──consumer──▶ delivery handler ──▶ receivers          (DLQ by redrive, as on AWS)
 *
 * The poller stands in for Lambda's DynamoDB Streams event source mapping: it reads every shard
 * of the table's stream, applies the same filter (functions/webhooks/stream-filter.ts), calls the
 * real dispatcher handler, and on a reported failure re-reads from the failed record. The consumer
 * is the payout pipeline's SQS poller (the event source mapping's stand-in). Intervals are short
 * so an event reaches a local receiver well within 2 s.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { uncounted } from '../../functions/store/client';
import { matchesDispatchFilter } from '../../functions/webhooks/stream-filter';
import { type BatchHandler, type LocalSqs, type PayoutConsumer, startPayoutConsumer } from './payout-pipeline';

export const WEBHOOK_QUEUE_NAME = 'agent-payments-webhooks';
export const WEBHOOK_DLQ_NAME = `${WEBHOOK_QUEUE_NAME}-dlq`;
const REGION = 'us-east-1';
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
/** Records per GetRecords call (DynamoDB Streams allows up to 1000). */
const PAGE = 1000;
/** How far empty polls stretch the wait, as a multiple of pollIntervalMs (see idlePollIntervalMs). */
const IDLE_BACKOFF = 4;

export interface WebhookQueues {
  queueUrl: string;
  dlqUrl: string;
  queueArn: string;
  /** WEBHOOK_QUEUE_URL for the handlers. */
  env: Record<string, string>;
}

/**
 * Adds the webhook queue and its DLQ to the local SQS that the payout pipeline started (one
 * SQS_ENDPOINT for every handler). `maxReceives` mirrors the CDK redrive policy.
 */
export async function createWebhookQueues(
  sqs: LocalSqs,
  opts: { visibilityTimeoutSeconds: number; maxReceives: number },
): Promise<WebhookQueues> {
  const client = new SQSClient({ region: REGION, endpoint: sqs.endpoint, credentials, maxAttempts: 1 });
  try {
    const dlq = await client.send(
      new CreateQueueCommand({ QueueName: WEBHOOK_DLQ_NAME, Attributes: { MessageRetentionPeriod: '1209600' } }),
    );
    const dlqArn = (await client.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }))).Attributes
      ?.QueueArn;
    const queue = await client.send(
      new CreateQueueCommand({
        QueueName: WEBHOOK_QUEUE_NAME,
        Attributes: {
          VisibilityTimeout: String(opts.visibilityTimeoutSeconds),
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: opts.maxReceives }),
        },
      }),
    );
    const queueArn = (await client.send(new GetQueueAttributesCommand({ QueueUrl: queue.QueueUrl, AttributeNames: ['QueueArn'] })))
      .Attributes?.QueueArn;
    const queueUrl = queue.QueueUrl ?? '';
    return { queueUrl, dlqUrl: dlq.QueueUrl ?? '', queueArn: queueArn ?? '', env: { WEBHOOK_QUEUE_URL: queueUrl } };
  } finally {
    client.destroy();
  }
}

export interface WebhookPipelineOptions {
  dynamoEndpoint: string;
  tableName: string;
  sqs: LocalSqs;
  queues: WebhookQueues;
  /** The dispatcher's Lambda handler. */
  dispatch: (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>;
  /** The delivery worker's Lambda handler. */
  deliver: BatchHandler;
  /** How often each shard is read while records are arriving (default 100 ms). */
  pollIntervalMs?: number;
  /**
   * The longest wait between polls when the stream is idle (default 4 × pollIntervalMs): empty
   * polls double the wait up to this, so an idle `npm start` polls 2.5 times a second instead of
   * 10, and the first event after a quiet spell waits at most this long before the next poll.
   */
  idlePollIntervalMs?: number;
  /** Persistent runs: the last dispatched sequence number per shard is kept here across restarts. */
  checkpointFile?: string;
  onError?: (where: 'dispatcher' | 'stream' | 'delivery', error: unknown) => void;
}

export interface WebhookPipeline {
  stop(): Promise<void>;
}

interface ShardState {
  iterator: string | undefined;
  /** The last sequence number dispatched (the checkpoint). */
  last: string | undefined;
  closed: boolean;
}

/** Starts the stream poller and the delivery consumer. */
export async function startWebhookPipeline(opts: WebhookPipelineOptions): Promise<WebhookPipeline> {
  const report = opts.onError ?? (() => undefined);
  const dynamo = new DynamoDBClient({ region: REGION, endpoint: opts.dynamoEndpoint, credentials });
  const described = await dynamo.send(new DescribeTableCommand({ TableName: opts.tableName }));
  dynamo.destroy();
  const streamArn = described.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${opts.tableName} has no stream`);
  const streams = new DynamoDBStreamsClient({ region: REGION, endpoint: opts.dynamoEndpoint, credentials, maxAttempts: 2 });

  const checkpoints: Record<string, string> = readCheckpoints(opts.checkpointFile);
  const shards = new Map<string, ShardState>();
  let firstDiscovery = true;
  let stopping = false;

  const discover = async () => {
    const out = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    for (const shard of out.StreamDescription?.Shards ?? []) {
      const id = shard.ShardId;
      if (!id || shards.has(id)) continue;
      const saved = checkpoints[id];
      // A fresh table (tests, in-memory): from the start. A kept one: after the checkpoint, or, the
      // first time, only what happens from now on (old events are not replayed at every start).
      const position = saved
        ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' as const, SequenceNumber: saved }
        : { ShardIteratorType: firstDiscovery && opts.checkpointFile ? ('LATEST' as const) : ('TRIM_HORIZON' as const) };
      const it = await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: id, ...position }));
      shards.set(id, { iterator: it.ShardIterator, last: saved, closed: false });
    }
    firstDiscovery = false;
  };

  const getRecords = (iterator: string) => streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: PAGE }));

  /** A fresh iterator just after `last`, or at the shard's oldest record when there is none or it was trimmed. */
  const seek = async (id: string, last: string | undefined): Promise<string | undefined> => {
    if (last) {
      try {
        const it = await streams.send(
          new GetShardIteratorCommand({
            StreamArn: streamArn,
            ShardId: id,
            ShardIteratorType: 'AFTER_SEQUENCE_NUMBER',
            SequenceNumber: last,
          }),
        );
        return it.ShardIterator;
      } catch (error) {
        if (!isLostPosition(error)) throw error;
      }
    }
    const it = await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: id, ShardIteratorType: 'TRIM_HORIZON' }));
    return it.ShardIterator;
  };

  /** Reads one page of a shard and dispatches it; returns how many records the page held. */
  const pollShard = async (id: string, state: ShardState): Promise<number> => {
    if (!state.iterator) {
      state.closed = true;
      return 0;
    }
    let out: Awaited<ReturnType<typeof getRecords>>;
    try {
      out = await getRecords(state.iterator);
    } catch (error) {
      if (!isLostPosition(error)) throw error;
      // DynamoDB Local trims and expires iterators under load (a busy shared instance): seek again
      // from the checkpoint (or the shard's start), as Lambda's event source mapping would.
      state.iterator = await seek(id, state.last);
      return 0;
    }
    const records = out.Records ?? [];
    const wanted = records.filter((r) => matchesDispatchFilter(r as Parameters<typeof matchesDispatchFilter>[0]));
    if (wanted.length > 0) {
      let failedAt: string | undefined;
      try {
        const result = await uncounted(() => opts.dispatch({ Records: wanted.map(toLambdaRecord) } as DynamoDBStreamEvent));
        failedAt = result.batchItemFailures[0]?.itemIdentifier;
      } catch (error) {
        report('dispatcher', error);
        failedAt = wanted[0]?.dynamodb?.SequenceNumber ?? '';
      }
      if (failedAt !== undefined) {
        // As Lambda does: read again from the failed record, after a pause.
        const it = await streams.send(
          new GetShardIteratorCommand({
            StreamArn: streamArn,
            ShardId: id,
            ShardIteratorType: 'AT_SEQUENCE_NUMBER',
            SequenceNumber: failedAt,
          }),
        );
        state.iterator = it.ShardIterator;
        await sleep(500);
        return 0;
      }
    }
    const last = records[records.length - 1]?.dynamodb?.SequenceNumber;
    if (last) {
      state.last = last;
      checkpoints[id] = last;
      writeCheckpoints(opts.checkpointFile, checkpoints);
    }
    state.iterator = out.NextShardIterator;
    return records.length;
  };

  const base = opts.pollIntervalMs ?? 100;
  const idleMax = Math.max(base, opts.idlePollIntervalMs ?? base * IDLE_BACKOFF);
  const loop = (async () => {
    let sinceDiscovery = Number.POSITIVE_INFINITY;
    let interval = base;
    while (!stopping) {
      let backlog = false;
      let anything = false;
      try {
        if (sinceDiscovery >= 1_000) {
          await discover();
          sinceDiscovery = 0;
        }
        // Shards are independent (order matters only within one): read them side by side.
        const open = [...shards].filter(([, state]) => !state.closed);
        const read = await Promise.all(open.map(([id, state]) => pollShard(id, state)));
        // A full page means more is waiting: read again at once instead of sleeping.
        backlog = read.some((n) => n >= PAGE);
        anything = read.some((n) => n > 0);
        // A shard that just closed has a child already taking writes: find it now, not in a second.
        if (open.some(([, state]) => state.closed)) {
          sinceDiscovery = Number.POSITIVE_INFINITY;
          backlog = true;
        }
      } catch (error) {
        if (!stopping) report('stream', error);
      }
      // Idle: each empty poll doubles the wait, up to idleMax; the first record brings it back to base.
      interval = anything ? base : Math.min(idleMax, interval * 2);
      const wait = backlog ? 0 : interval;
      sinceDiscovery += Math.max(wait, 10);
      if (wait > 0) await sleep(wait);
    }
  })();

  const consumer: PayoutConsumer = startPayoutConsumer({
    sqs: { ...opts.sqs, queueUrl: opts.queues.queueUrl, queueArn: opts.queues.queueArn, dlqUrl: opts.queues.dlqUrl },
    worker: opts.deliver,
    // The payout consumer also runs a reconciler; the webhook pipeline has none.
    reconcile: async () => undefined,
    reconcileIntervalMs: 2 ** 30,
    pollers: 2,
    onError: (_where, error) => report('delivery', error),
  });

  return {
    stop: async () => {
      stopping = true;
      await loop;
      await consumer.stop();
      streams.destroy();
    },
  };
}

/** The record Lambda's DynamoDB Streams event source mapping hands over (epoch seconds, not a Date). */
function toLambdaRecord(record: StreamRecord) {
  const at = record.dynamodb?.ApproximateCreationDateTime;
  return {
    ...record,
    dynamodb: { ...record.dynamodb, ApproximateCreationDateTime: at instanceof Date ? at.getTime() / 1000 : at },
  };
}

function readCheckpoints(file: string | undefined): Record<string, string> {
  if (!file || !existsSync(file)) return {};
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

function writeCheckpoints(file: string | undefined, checkpoints: Record<string, string>): void {
  if (!file) return;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(checkpoints));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The stream errors that mean "this iterator's position is gone": seek again instead of retrying it. */
const isLostPosition = (error: unknown): boolean =>
  error instanceof Error && (error.name === 'TrimmedDataAccessException' || error.name === 'ExpiredIteratorException');
