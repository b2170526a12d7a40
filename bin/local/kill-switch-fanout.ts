/**
 * The kill switch's fan-out on one machine, the same path as on AWS (lib/kill-switch-fanout.ts):
 *
 *   table stream (DynamoDB Local) ──poller (agent items only)──▶ fan-out handler ──▶ balance shards
 *
 * An operator's flip of `enabled` on the agent item reaches the shards within one poll interval
 * (100 ms) and the handler's few writes: well within the 2 s the design allows.
 */
import type { _Record as StreamRecord } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { matchesFanOutFilter } from '../../functions/kill-switch/stream-filter';
import { type StreamPoller, startStreamPoller } from './stream-poller';

export interface KillSwitchFanOutOptions {
  dynamoEndpoint: string;
  tableName: string;
  /** The fan-out's Lambda handler (functions/kill-switch-fanout/handler.ts). */
  handler: (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse>;
  pollIntervalMs?: number;
  /** The wait between polls while the stream is idle (the stack passes pollIntervalMs: no back-off). */
  idlePollIntervalMs?: number;
  checkpointFile?: string;
  onError?: (where: 'handler' | 'stream', error: unknown) => void;
}

export function startKillSwitchFanOut(opts: KillSwitchFanOutOptions): Promise<StreamPoller> {
  return startStreamPoller({
    ...opts,
    filter: (record: StreamRecord) => matchesFanOutFilter(record as Parameters<typeof matchesFanOutFilter>[0]),
  });
}
