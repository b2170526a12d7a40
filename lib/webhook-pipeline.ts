/**
 * The webhook pipeline (docs/webhooks.md):
 *
 *   table stream (NEW_AND_OLD_IMAGES) ──filter──▶ dispatcher ──▶ delivery queue ──▶ delivery worker ──▶ receivers
 *                                                                      └─ DLQ (redrive: a message that keeps crashing the worker)
 *
 * - The dispatcher's event source mapping lets through only new outbox items and modified agent
 *   items (functions/webhooks/stream-filter.ts, shared with the local poller), reports partial
 *   batch failures, and retries a failed record until it succeeds or leaves the stream (24 h):
 *   an event is never skipped. The IteratorAge alarm says when it falls behind.
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
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEFAULT_RETRY_SCHEDULE_SECONDS, maxAttempts } from '../functions/core/webhooks';
import { BACKGROUND_GRANTS } from '../functions/store/access';
import { DISPATCH_FILTER_PATTERNS } from '../functions/webhooks/stream-filter';
import type { DataStore } from './data-store';
import { grantConsumeQueue, grantReadSecrets, grantSendToQueue, grantTable } from './grants';
import { ServiceFunction } from './service-function';
import type { StageConfig } from './stage-config';

export const DISPATCHER_ENTRY = 'functions/webhook-dispatcher/handler.ts';
export const DELIVERY_ENTRY = 'functions/webhook-delivery/handler.ts';
/** Ten receivers answering within 10 s each, sent at once, plus the bookkeeping. */
export const DELIVERY_TIMEOUT = Duration.seconds(30);
/** The encryption context key every webhook secret is sealed with (store/webhook-secret.ts). */
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

export class WebhookPipeline extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly dispatcher: ServiceFunction;
  readonly delivery: ServiceFunction;
  private readonly stage: string;

  constructor(scope: Construct, id: string, props: { config: StageConfig; data: DataStore }) {
    super(scope, id);
    const { config, data } = props;
    this.stage = config.stage;

    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new sqs.Queue(this, 'Queue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // Six times the worker's timeout (AWS's guidance for an SQS event source); a retry sets its own.
      visibilityTimeout: Duration.seconds(DELIVERY_TIMEOUT.toSeconds() * 6),
      // Longer than the whole retry schedule (27.6 h), so no message expires while retrying.
      retentionPeriod: Duration.days(4),
      // Each attempt is one receive; a few more for worker crashes. The worker itself marks a
      // delivery dead after its last attempt; the DLQ holds what kept crashing the worker.
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: maxAttempts(DEFAULT_RETRY_SCHEDULE_SECONDS) + 5 },
    });

    this.dispatcher = new ServiceFunction(this, 'Dispatcher', {
      entry: DISPATCHER_ENTRY,
      description: 'Webhook dispatcher: outbox items and agent changes from the table stream, one delivery message per endpoint',
      timeout: Duration.seconds(30),
      config,
      environment: { TABLE_NAME: data.table.tableName, WEBHOOK_QUEUE_URL: this.queue.queueUrl },
    });
    // Reads the owners' endpoints (one Query per owner); writes nothing.
    grantTable(this.dispatcher.role, data.table, BACKGROUND_GRANTS['webhook-dispatcher']);
    grantSendToQueue(this.dispatcher.role, this.queue);
    // What Lambda's DynamoDB Streams event source mapping reads, on this table's stream only
    // (CDK's grantStreamRead would add ListStreams on "*").
    this.dispatcher.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'],
        resources: [data.table.tableStreamArn ?? ''],
      }),
    );
    this.dispatcher.fn.addEventSourceMapping('TableStream', {
      eventSourceArn: data.table.tableStreamArn,
      startingPosition: lambda.StartingPosition.TRIM_HORIZON,
      batchSize: 100,
      maxBatchingWindow: Duration.seconds(0),
      reportBatchItemFailures: true,
      filters: DISPATCH_FILTER_PATTERNS.map((pattern) => lambda.FilterCriteria.filter(structuredClone(pattern) as Record<string, unknown>)),
    });

    this.delivery = new ServiceFunction(this, 'Delivery', {
      entry: DELIVERY_ENTRY,
      description: 'Webhook delivery: signs (Standard Webhooks) and POSTs one event to one endpoint, retries with backoff',
      timeout: DELIVERY_TIMEOUT,
      config,
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
    // The retry schedule: a failed message's next appearance is pushed out (functions/webhooks/queue.ts).
    this.delivery.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['sqs:ChangeMessageVisibility'], resources: [this.queue.queueArn] }),
    );
    grantWebhookSecrets(this.delivery.role, data, 'kms:Decrypt');
    grantReadSecrets(this.delivery.role, [data.approvalSecret]);
    this.delivery.fn.addEventSourceMapping('DeliveryQueue', {
      eventSourceArn: this.queue.queueArn,
      batchSize: 10,
      reportBatchItemFailures: true,
      maxConcurrency: 20,
    });
  }

  /** The pipeline's alarms, on the stage's alarm topic (lib/monitoring.ts). */
  addAlarms(topic: sns.ITopic): cloudwatch.Alarm[] {
    const five = Duration.minutes(5);
    const alarms = [
      this.alarm('WebhookDlqNotEmpty', {
        alarmDescription: 'Webhook delivery messages are in the DLQ: the delivery worker kept crashing on them (docs/webhooks.md).',
        metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: five, statistic: 'Maximum' }),
        threshold: 1,
        evaluationPeriods: 1,
      }),
      this.alarm('WebhookDispatcherErrors', {
        alarmDescription: 'The webhook dispatcher failed in 2 of the last 3 5-minute periods; events wait in the stream.',
        metric: this.dispatcher.fn.metricErrors({ period: five, statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
      }),
      this.alarm('WebhookDispatcherIteratorAge', {
        alarmDescription: 'The webhook dispatcher is 5 minutes behind the table stream (records expire after 24 h).',
        metric: new cloudwatch.Metric({
          namespace: 'AWS/Lambda',
          metricName: 'IteratorAge',
          dimensionsMap: { FunctionName: this.dispatcher.fn.functionName },
          period: five,
          statistic: 'Maximum',
        }),
        threshold: 300_000,
        evaluationPeriods: 1,
      }),
      this.alarm('WebhookDeliveryErrors', {
        alarmDescription: 'The webhook delivery worker threw (a whole batch failed, not one receiver) in 2 of 3 5-minute periods.',
        metric: this.delivery.fn.metricErrors({ period: five, statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
      }),
    ];
    const action = new actions.SnsAction(topic);
    for (const alarm of alarms) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
    return alarms;
  }

  private alarm(id: string, props: Omit<cloudwatch.AlarmProps, 'actionsEnabled'>): cloudwatch.Alarm {
    return new cloudwatch.Alarm(this, id, {
      alarmName: `agent-payment-service-${this.stage}-${id}`,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      ...props,
    });
  }
}
