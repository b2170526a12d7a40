/**
 * A stand-in for one Lambda DynamoDB Streams event source mapping over DynamoDB Local's stream:
 * reads every shard of the table's stream, applies the mapping's filter, calls the handler with
 * the matching records in order, and on a reported failure (partial batch failure, or a throw)
 * reads again from the failed record after a pause, as Lambda does. Used by the kill-switch
 * fan-out (kill-switch-fanout.ts) and the webhook dispatcher (webhook-pipeline.ts).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { uncounted } from '../../functions/store/client';

const REGION = 'us-east-1';
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
/** Records per GetRecords call (DynamoDB Streams allows up to 1000). */
const PAGE = 1000;
/** How long a failed record waits before it is read again. */
const RETRY_PAUSE_MS = 200;

export interface StreamPollerOptions {
  dynamoEndpoint: string;
  tableName: string;
  /** The event source mapping's filter. */
  filter: (record: StreamRecord) => boolean;
  /** The function's Lambda handler. */
  handler: (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>;
  /**
   * How often each shard is read while records flow (default 100 ms). While the stream is idle the
   * pause doubles up to `idlePollIntervalMs` (default 4 times this: 400 ms), and is back to it at
   * the first record: DynamoDB Local is shared by every stack of a test run, and idle polling was a
   * steady share of its CPU (docs/benchmarks.md). The kill switch's poller does not back off.
   */
  pollIntervalMs?: number;
  /** The longest wait between polls while the stream is idle (default 4 × pollIntervalMs). */
  idlePollIntervalMs?: number;
  /** How long a failed record waits before it is read again (default 200 ms). */
  retryPauseMs?: number;
  /** Persistent runs: the last handled sequence number per shard is kept here across restarts. */
  checkpointFile?: string;
  onError?: (where: 'handler' | 'stream', error: unknown) => void;
}

export interface StreamPoller {
  stop(): Promise<void>;
}

interface ShardState {
  iterator: string | undefined;
  last: string | undefined;
  closed: boolean;
}

export async function startStreamPoller(opts: StreamPollerOptions): Promise<StreamPoller> {
  const report = opts.onError ?? (() => undefined);
  const dynamo = new DynamoDBClient({ region: REGION, endpoint: opts.dynamoEndpoint, credentials });
  const described = await dynamo.send(new DescribeTableCommand({ TableName: opts.tableName }));
  dynamo.destroy();
  const streamArn = described.Table?.LatestStreamArn;
  if (!streamArn) throw new Error(`table ${opts.tableName} has no stream`);
  const streams = new DynamoDBStreamsClient({ region: REGION, endpoint: opts.dynamoEndpoint, credentials, maxAttempts: 2 });
  const checkpoints = readCheckpoints(opts.checkpointFile);
  const shards = new Map<string, ShardState>();
  let firstDiscovery = true;
  let stopping = false;

  const iterator = async (
    id: string,
    position:
      | { ShardIteratorType: 'TRIM_HORIZON' | 'LATEST' }
      | { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER' | 'AT_SEQUENCE_NUMBER'; SequenceNumber: string },
  ) => (await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: id, ...position }))).ShardIterator;

  const discover = async () => {
    const out = await streams.send(new DescribeStreamCommand({ StreamArn: streamArn }));
    for (const shard of out.StreamDescription?.Shards ?? []) {
      const id = shard.ShardId;
      if (!id || shards.has(id)) continue;
      const saved = checkpoints[id];
      // A fresh table: from the start. A kept one: after the checkpoint, or the first time, from now on.
      const it = saved
        ? await iterator(id, { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: saved })
        : await iterator(id, { ShardIteratorType: firstDiscovery && opts.checkpointFile ? 'LATEST' : 'TRIM_HORIZON' });
      shards.set(id, { iterator: it, last: saved, closed: false });
    }
    firstDiscovery = false;
  };

  /** A fresh iterator just after `last`, or at the shard's oldest record when there is none or it was trimmed. */
  const seek = async (id: string, last: string | undefined): Promise<string | undefined> => {
    if (last) {
      try {
        return await iterator(id, { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: last });
      } catch (error) {
        if (!isLostPosition(error)) throw error;
      }
    }
    return iterator(id, { ShardIteratorType: 'TRIM_HORIZON' });
  };

  const pollShard = async (id: string, state: ShardState): Promise<number> => {
    if (!state.iterator) {
      state.closed = true;
      return 0;
    }
    let out: GetRecordsCommandOutput;
    try {
      out = await streams.send(new GetRecordsCommand({ ShardIterator: state.iterator, Limit: PAGE }));
    } catch (error) {
      if (!isLostPosition(error)) throw error;
      state.iterator = await seek(id, state.last);
      return 0;
    }
    const records = out.Records ?? [];
    const wanted = records.filter(opts.filter);
    if (wanted.length > 0) {
      let failedAt: string | undefined;
      try {
        const result = await uncounted(() => opts.handler({ Records: wanted.map(toLambdaRecord) } as DynamoDBStreamEvent));
        failedAt = result.batchItemFailures[0]?.itemIdentifier;
      } catch (error) {
        report('handler', error);
        failedAt = wanted[0]?.dynamodb?.SequenceNumber ?? '';
      }
      if (failedAt !== undefined) {
        // As Lambda does: read again from the failed record, after a pause.
        state.iterator = failedAt
          ? await iterator(id, { ShardIteratorType: 'AT_SEQUENCE_NUMBER', SequenceNumber: failedAt })
          : await seek(id, state.last);
        await sleep(opts.retryPauseMs ?? RETRY_PAUSE_MS);
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
  const idleMax = Math.max(base, opts.idlePollIntervalMs ?? base * 4);
  const loop = (async () => {
    let sinceDiscovery = Number.POSITIVE_INFINITY;
    let idleInterval = base;
    while (!stopping) {
      let backlog = false;
      let anything = false;
      try {
        if (sinceDiscovery >= 1_000) {
          await discover();
          sinceDiscovery = 0;
        }
        const open = [...shards].filter(([, state]) => !state.closed);
        const read = await Promise.all(open.map(([id, state]) => pollShard(id, state)));
        backlog = read.some((n) => n >= PAGE);
        anything = read.some((n) => n > 0);
        if (open.some(([, state]) => state.closed)) {
          sinceDiscovery = Number.POSITIVE_INFINITY;
          backlog = true;
        }
      } catch (error) {
        if (!stopping) report('stream', error);
      }
      idleInterval = anything ? base : Math.min(idleMax, idleInterval * 2);
      const interval = backlog ? 0 : idleInterval;
      sinceDiscovery += Math.max(interval, 10);
      if (interval > 0) await sleep(interval);
    }
  })();

  return {
    stop: async () => {
      stopping = true;
      await loop;
      streams.destroy();
    },
  };
}

/** The record Lambda's DynamoDB Streams event source mapping hands over (epoch seconds, not a Date). */
function toLambdaRecord(record: StreamRecord) {
  const at = record.dynamodb?.ApproximateCreationDateTime;
  return { ...record, dynamodb: { ...record.dynamodb, ApproximateCreationDateTime: at instanceof Date ? at.getTime() / 1000 : at } };
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

const isLostPosition = (error: unknown): boolean =>
  error instanceof Error && (error.name === 'TrimmedDataAccessException' || error.name === 'ExpiredIteratorException');
