/**
 * The webhook pipeline (docs/webhooks.md):
 *
 *   table stream (NEW_AND_OLD_IMAGES) ──filter──▶ dispatcher ──▶ delivery queue ──▶ delivery worker ──▶ receivers
 *                                                                      └─ DLQ (redrive: a message that keeps crashing the worker)
 *
 * - The dispatcher's event source mapping lets through only new outbox items and modified agent
 *   items (functions/webhooks/stream-filter.ts, shared with the local poller) and reports partial
 *   batch failures (the dispatcher stops a batch at its first failed record). A failed record is
 *   retried at most STREAM_RETRY_ATTEMPTS times and while younger than STREAM_MAX_RECORD_AGE, and
 *   a batch whose invocation fails outright is halved to isolate the record at fault: one poison
 *   record no longer holds its shard's later events back for the stream's whole 24 h. A batch it
 *   gives up on leaves a note (shard, sequence numbers, arrival times; not the records) in the
 *   stream failure queue, which alarms; the operator re-dispatches that time range from the outbox
 *   (`npm run admin -- redispatch`, docs/operating/runbooks.md "Webhooks"), which delivers an event to an endpoint once.
 *   The IteratorAge alarm says when the dispatcher falls behind.
 * - The delivery worker retries a failed delivery by pushing its message's visibility out along
 *   the schedule (core/webhooks.ts, > 24 h); the queue keeps messages 4 days, longer than that.
 * - The delivery worker needs the internet: it runs outside any VPC (Lambda's default egress),
 *   and checks every address it connects to (functions/webhooks/sender.ts).
 * - Signing secrets are encrypted under `data.webhookSecretsKey`: create routes may only Encrypt,
 *   the worker may only Decrypt, both only with this service's encryption context.
 * - The worker also reads the approval secret: `charge.approval_requested` is stored with a
 *   placeholder for the approval link's token, which the worker derives before signing.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { DEFAULT_RETRY_SCHEDULE_SECONDS, maxAttempts } from '../functions/core/webhooks';
import { BACKGROUND_GRANTS } from '../functions/store/access';
import { DISPATCH_FILTER_PATTERNS } from '../functions/webhooks/stream-filter';
import { type AlarmSpec, addAlarm } from './alarms';
import type { DataStore } from './data-store';
import { grantConsumeQueue, grantReadSecrets, grantSendToQueue, grantTable } from './grants';
import { QueueWithDlq } from './queue-with-dlq';
import { ServiceFunction } from './service-function';
import { reservedConcurrency, type StageConfig } from './stage-config';
import { consumeTableStream, streamFailureQueue } from './table-stream';

export const DISPATCHER_ENTRY = 'functions/webhook-dispatcher/handler.ts';
export const DELIVERY_ENTRY = 'functions/webhook-delivery/handler.ts';
/** Ten receivers answering within 10 s each, sent at once, plus the bookkeeping. */
export const DELIVERY_TIMEOUT = Duration.seconds(30);
export { STREAM_MAX_RECORD_AGE, STREAM_RETRY_ATTEMPTS } from './table-stream';

/**
 * The delivery queue's oldest message may wait this long before WebhookQueueAge fires. A fresh
 * message waits milliseconds; a retried one counts from its first send (its first delays are 5 s
 * and 5 min) until its third receive, after which SQS leaves it out of the age: so more than the
 * schedule's first steps, and what the payout queue is given.
 */
export const DELIVERY_QUEUE_MAX_AGE = Duration.minutes(15);

/** The encryption context key every webhook secret is sealed with (store/events/webhook-secret.ts). */
export const WEBHOOK_SECRET_CONTEXT = { 'kms:EncryptionContext:service': 'agent-payment-service' };

/** kms:Encrypt (create routes) or kms:Decrypt (delivery worker) on the webhook key, this service's context only. */
export function grantWebhookSecrets(role: iam.IRole, data: DataStore, action: 'kms:Encrypt' | 'kms:Decrypt'): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: [action],
      resources: [data.webhookSecretsKey.keyArn],
      conditions: { StringEquals: WEBHOOK_SECRET_CONTEXT },
    }),
  );
}

/**
 * The stream mapping's on-failure destination, with only the SendMessage grant it needs (CDK's
 * SqsDlq grants GetQueueAttributes and GetQueueUrl too; lib/grants.ts writes grants by hand).
 */
export class WebhookPipeline extends QueueWithDlq {
  /** Notes of stream batches the dispatcher gave up on (Lambda's on-failure destination). */
  readonly streamFailureQueue: sqs.Queue;
  readonly dispatcher: ServiceFunction;
  readonly delivery: ServiceFunction;
  private readonly stage: string;

  constructor(scope: Construct, id: string, props: { config: StageConfig; data: DataStore }) {
    const { config, data } = props;
    super(scope, id, {
      // Six times the worker's timeout (AWS's guidance for an SQS event source); a retry sets its own.
      visibilityTimeout: Duration.seconds(DELIVERY_TIMEOUT.toSeconds() * 6),
      // Longer than the whole retry schedule (27.6 h), so no message expires while retrying.
      retentionPeriod: Duration.days(4),
      // Each attempt is one receive; a few more for worker crashes. The worker itself marks a
      // delivery dead after its last attempt; the DLQ holds what kept crashing the worker.
      maxReceiveCount: maxAttempts(DEFAULT_RETRY_SCHEDULE_SECONDS) + 5,
    });
    this.stage = config.stage;

    // A note waits there until an operator re-dispatches its range (outbox items live 7 days).
    this.streamFailureQueue = streamFailureQueue(this, 'dispatcher', 'an operator reads each note and deletes it after re-dispatching.');

    this.dispatcher = new ServiceFunction(this, 'Dispatcher', {
      entry: DISPATCHER_ENTRY,
      description: 'Webhook dispatcher: outbox items and agent changes from the table stream, one delivery message per endpoint',
      timeout: Duration.seconds(30),
      config,
      // The receipt key: a settled movement's event carries its receipt, signed here (lib/receipts.ts).
      environment: { TABLE_NAME: data.table.tableName, WEBHOOK_QUEUE_URL: this.queue.queueUrl, ...data.receipts.environment('sign') },
      // None by default (lib/stage-config.ts): one invocation per stream shard, however many there are.
      reservedConcurrency: reservedConcurrency(config, config.webhookDispatcherReservedConcurrency),
    });
    // Reads the owners' endpoints (one Query per owner) and the settled records it signs receipts of; writes nothing.
    grantTable(this.dispatcher.role, data.table, BACKGROUND_GRANTS['webhook-dispatcher']);
    data.receipts.grant(this.dispatcher.role, 'sign');
    grantSendToQueue(this.dispatcher.role, this.queue);
    consumeTableStream(this.dispatcher, data, { failureQueue: this.streamFailureQueue, filters: DISPATCH_FILTER_PATTERNS });

    this.delivery = new ServiceFunction(this, 'Delivery', {
      entry: DELIVERY_ENTRY,
      description: 'Webhook delivery: signs (Standard Webhooks) and POSTs one event to one endpoint, retries with backoff',
      timeout: DELIVERY_TIMEOUT,
      config,
      // As many as its queue mapping may run at once (below: maxConcurrency), reserved.
      reservedConcurrency: reservedConcurrency(config, config.webhookDeliveryConcurrency),
      environment: {
        TABLE_NAME: data.table.tableName,
        WEBHOOK_QUEUE_URL: this.queue.queueUrl,
        WEBHOOK_KMS_KEY_ID: data.webhookSecretsKey.keyArn,
        // charge.approval_requested: the approval link's token is derived here, never stored.
        APPROVAL_SECRET_ARN: data.approvalSecret.secretArn,
      },
    });
    grantTable(this.delivery.role, data.table, BACKGROUND_GRANTS['webhook-delivery']);
    grantConsumeQueue(this.delivery.role, this.queue);
    // The retry schedule: a failed message's next appearance is pushed out (functions/queue/webhook-queue.ts).
    this.delivery.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['sqs:ChangeMessageVisibility'], resources: [this.queue.queueArn] }),
    );
    grantWebhookSecrets(this.delivery.role, data, 'kms:Decrypt');
    grantReadSecrets(this.delivery.role, [data.approvalSecret]);
    this.delivery.fn.addEventSourceMapping('DeliveryQueue', {
      eventSourceArn: this.queue.queueArn,
      batchSize: 10,
      reportBatchItemFailures: true,
      maxConcurrency: config.webhookDeliveryConcurrency,
    });
  }

  /** The pipeline's alarms (docs/operating/alarms.md "Alarms"), by the same rules as lib/monitoring.ts's table. */
  alarmSpecs(): AlarmSpec[] {
    const five = Duration.minutes(5);
    return [
      {
        id: 'WebhookDlqNotEmpty',
        description: 'Webhook delivery messages are in the DLQ: the delivery worker kept crashing on them (docs/webhooks.md).',
        metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: five, statistic: 'Maximum' }),
        threshold: 1,
      },
      {
        id: 'WebhookStreamFailures',
        description:
          'The webhook dispatcher gave up on a stream batch (retries or record age exhausted): its events were not dispatched. Each message names the time range; re-dispatch it (npm run admin -- redispatch, docs/deploy.md), then delete the message.',
        metric: this.streamFailureQueue.metricApproximateNumberOfMessagesVisible({ period: five, statistic: 'Maximum' }),
        threshold: 1,
      },
      {
        id: 'WebhookDispatcherErrors',
        description: 'The webhook dispatcher failed in 2 of the last 3 5-minute periods; events wait in the stream.',
        metric: this.dispatcher.fn.metricErrors({ period: five, statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
      },
      {
        id: 'WebhookDispatcherIteratorAge',
        description: 'The webhook dispatcher is 5 minutes behind the table stream (records expire after 24 h).',
        metric: new cloudwatch.Metric({
          namespace: 'AWS/Lambda',
          metricName: 'IteratorAge',
          dimensionsMap: { FunctionName: this.dispatcher.fn.functionName },
          period: five,
          statistic: 'Maximum',
        }),
        threshold: 300_000,
      },
      {
        id: 'WebhookQueueAge',
        description: `The oldest webhook delivery message has waited ${DELIVERY_QUEUE_MAX_AGE.toMinutes()} minutes: the delivery worker is not taking new messages (throttled, failing or at its concurrency). A retrying message drops out of this age after its third receive.`,
        metric: this.queue.metricApproximateAgeOfOldestMessage({ period: five, statistic: 'Maximum' }),
        threshold: DELIVERY_QUEUE_MAX_AGE.toSeconds(),
      },
      {
        id: 'WebhookDeliveryErrors',
        description: 'The webhook delivery worker threw (a whole batch failed, not one receiver) in 2 of 3 5-minute periods.',
        metric: this.delivery.fn.metricErrors({ period: five, statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
      },
    ];
  }

  /** The pipeline's alarms, on the stage's alarm topic (lib/monitoring.ts). */
  addAlarms(topic: sns.ITopic): cloudwatch.Alarm[] {
    return this.alarmSpecs().map((spec) => addAlarm(this, this.stage, topic, spec));
  }
}
