import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { matchesDispatchFilter } from '../../functions/webhooks/stream-filter';
import { type BatchHandler, type LocalSqs, type PayoutConsumer, startPayoutConsumer } from './payout-pipeline';
import { startStreamPoller } from './stream-poller';

export const WEBHOOK_QUEUE_NAME = 'agent-payments-webhooks';
export const WEBHOOK_DLQ_NAME = `${WEBHOOK_QUEUE_NAME}-dlq`;
const REGION = 'us-east-1';
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
/** Records per GetRecords call (DynamoDB Streams allows up to 1000). */
const _PAGE = 1000;
/** How far empty polls stretch the wait, as a multiple of pollIntervalMs (see idlePollIntervalMs). */
const _IDLE_BACKOFF = 4;

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

export async function startWebhookPipeline(opts: WebhookPipelineOptions): Promise<WebhookPipeline> {
  const report = opts.onError ?? (() => undefined);
  const poller = await startStreamPoller({
    dynamoEndpoint: opts.dynamoEndpoint,
    tableName: opts.tableName,
    filter: (record) => matchesDispatchFilter(record as Parameters<typeof matchesDispatchFilter>[0]),
    handler: opts.dispatch,
    pollIntervalMs: opts.pollIntervalMs ?? 100,
    idlePollIntervalMs: opts.idlePollIntervalMs,
    retryPauseMs: 500,
    checkpointFile: opts.checkpointFile,
    onError: (where, error) => report(where === 'handler' ? 'dispatcher' : 'stream', error),
  });

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
      await poller.stop();
      await consumer.stop();
    },
  };
}
