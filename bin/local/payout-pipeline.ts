/**
 * The payout pipeline on one machine: an in-process SQS (`local-aws-sqs`, which speaks the
 * current SQS JSON protocol) with the payout queue and its dead-letter queue wired by a redrive
 * policy exactly as on AWS, a consumer that polls it the way Lambda's event source mapping does
 * (batches of up to 10, `reportBatchItemFailures`: successes deleted, failures left to reappear
 * after the visibility timeout), and the reconciler on an interval instead of an EventBridge
 * schedule. The worker and the reconciler are the real Lambda handlers.
 */

import { DeleteMessageBatchCommand, type Message, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createSqsServer } from 'local-aws-sqs';
import { uncounted } from '../../functions/store/client';
import { freePort } from './local-server';

const REGION = 'us-east-1';
/** local-aws-sqs's (cosmetic) account id, part of every queue URL and ARN. */
const ACCOUNT_ID = '123456789012';
export const PAYOUT_QUEUE_NAME = 'agent-payments-payouts';
export const PAYOUT_DLQ_NAME = `${PAYOUT_QUEUE_NAME}-dlq`;

export interface LocalSqsOptions {
  /** Seconds a received message stays invisible (the worker's "timeout"). */
  visibilityTimeoutSeconds: number;
  /** Receives before a message moves to the DLQ (the redrive policy's maxReceiveCount). */
  maxReceives: number;
}

export interface LocalSqs {
  endpoint: string;
  queueUrl: string;
  dlqUrl: string;
  queueArn: string;
  /** SQS_ENDPOINT and PAYOUT_QUEUE_URL for the handlers. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts local SQS on a free loopback port with the payout queue and its DLQ. */
export async function startLocalSqs(opts: LocalSqsOptions): Promise<LocalSqs> {
  const port = await freePort();
  const dlqArn = `arn:aws:sqs:${REGION}:${ACCOUNT_ID}:${PAYOUT_DLQ_NAME}`;
  const server = await createSqsServer({
    port,
    hostname: '127.0.0.1',
    region: REGION,
    accountId: ACCOUNT_ID,
    emulateQueueCreationLifecycle: false,
    queues: [
      // 14 days, SQS's longest retention: what sits in the DLQ waits for an operator.
      { QueueName: PAYOUT_DLQ_NAME, Attributes: { MessageRetentionPeriod: 1_209_600 } },
      {
        QueueName: PAYOUT_QUEUE_NAME,
        Attributes: {
          VisibilityTimeout: opts.visibilityTimeoutSeconds,
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: opts.maxReceives }),
        },
      },
    ],
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const queueUrl = `${endpoint}/${ACCOUNT_ID}/${PAYOUT_QUEUE_NAME}`;
  return {
    endpoint,
    queueUrl,
    dlqUrl: `${endpoint}/${ACCOUNT_ID}/${PAYOUT_DLQ_NAME}`,
    queueArn: `arn:aws:sqs:${REGION}:${ACCOUNT_ID}:${PAYOUT_QUEUE_NAME}`,
    env: { SQS_ENDPOINT: endpoint, PAYOUT_QUEUE_URL: queueUrl },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type BatchHandler = (event: SQSEvent) => Promise<SQSBatchResponse>;

export interface PayoutConsumerOptions {
  sqs: LocalSqs;
  /** The payout worker's Lambda handler. */
  worker: BatchHandler;
  /** One reconciler run (the reconciler's Lambda handler). */
  reconcile: () => Promise<unknown>;
  reconcileIntervalMs: number;
  /** Records per invocation (the event source mapping's BatchSize). */
  batchSize?: number;
  /** Concurrent pollers, like the event source mapping's concurrent invocations. */
  pollers?: number;
  /** Where a thrown handler or reconciler error is reported. */
  onError?: (where: 'worker' | 'reconciler', error: unknown) => void;
}

export interface PayoutConsumer {
  stop(): Promise<void>;
}

/** How long an idle poller waits before asking again (local-aws-sqs answers WaitTimeSeconds 0 at once). */
const IDLE_POLL_MS = 100;

/** Starts polling the payout queue and running the reconciler; `stop` lets in-flight work finish. */
export function startPayoutConsumer(opts: PayoutConsumerOptions): PayoutConsumer {
  const client = new SQSClient({
    region: REGION,
    endpoint: opts.sqs.endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  const abort = new AbortController();
  let stopping = false;
  const report = opts.onError ?? (() => undefined);

  const pollOnce = async (): Promise<number> => {
    const out = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: opts.sqs.queueUrl,
        MaxNumberOfMessages: opts.batchSize ?? 10,
        // local-aws-sqs waits the whole WaitTimeSeconds unless the batch fills up, so no long poll.
        WaitTimeSeconds: 0,
        // It fills ApproximateReceiveCount & co. only when asked with AttributeNames.
        AttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: abort.signal },
    );
    const messages = out.Messages ?? [];
    if (messages.length === 0) return 0;
    let failed: Set<string>;
    try {
      // Another function's requests (the worker's own Lambda on AWS): not counted against a test's request.
      const result = await uncounted(() => opts.worker({ Records: messages.map((m) => toRecord(m, opts.sqs.queueArn)) }));
      failed = new Set((result?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (error) {
      // A thrown handler fails the whole batch, as on Lambda.
      report('worker', error);
      failed = new Set(messages.map((m) => m.MessageId ?? ''));
    }
    const done = messages.filter((m) => m.MessageId && m.ReceiptHandle && !failed.has(m.MessageId));
    if (done.length > 0) {
      await client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: opts.sqs.queueUrl,
          Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    }
    return messages.length;
  };

  const poller = async (): Promise<void> => {
    while (!stopping) {
      let received = 0;
      try {
        received = await pollOnce();
      } catch (error) {
        if (stopping) break;
        report('worker', error);
      }
      if (received === 0 && !stopping) await sleep(IDLE_POLL_MS, abort.signal);
    }
  };

  let reconciling: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    reconciling = reconciling.then(async () => {
      if (stopping) return;
      try {
        await uncounted(opts.reconcile);
      } catch (error) {
        report('reconciler', error);
      }
    });
  }, opts.reconcileIntervalMs);

  const pollers = Array.from({ length: opts.pollers ?? 2 }, poller);

  return {
    stop: async () => {
      stopping = true;
      clearInterval(timer);
      abort.abort();
      await Promise.all(pollers);
      await reconciling;
      client.destroy();
    },
  };
}

/** The record Lambda's event source mapping builds from an SQS message. */
function toRecord(message: Message, queueArn: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: REGION,
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
