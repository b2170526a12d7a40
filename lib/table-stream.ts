/**
 * A Lambda consuming the table's stream, as the webhook dispatcher and the kill-switch fan-out do:
 * the stream read grant (this table's stream only: CDK's grantStreamRead would add ListStreams on
 * "*"), the event source mapping (filtered; partial batch failures; retried at most
 * STREAM_RETRY_ATTEMPTS times and while younger than STREAM_MAX_RECORD_AGE; bisected on error) and
 * its on-failure queue, where a batch given up on leaves a note for an operator.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { DataStore } from './data-store';
import { grantSendToQueue } from './grants';
import type { ServiceFunction } from './service-function';

/**
 * Retries of a failed stream record before its batch goes to the failure queue (with partial batch
 * failures each retry starts at the failed record). Generous for an SQS or DynamoDB hiccup, small
 * enough that a record that can never succeed stops blocking its shard.
 */
export const STREAM_RETRY_ATTEMPTS = 50;
/** Older records are given up on (to the failure queue) rather than retried further: an hour's outage, not the stream's 24 h. */
export const STREAM_MAX_RECORD_AGE = Duration.hours(1);

/**
 * The on-failure queue of a stream consumer (id `StreamFailureQueue` in `scope`), kept 14 days
 * (SQS's longest). `whatTheOperatorDoes` completes cdk-nag's acknowledgement: nothing consumes it.
 */
export function streamFailureQueue(scope: Construct, consumer: string, whatTheOperatorDoes: string): sqs.Queue {
  const queue = new sqs.Queue(scope, 'StreamFailureQueue', {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  Validations.of(queue).acknowledge({
    id: 'AwsSolutions-SQS3',
    reason: `It is a dead-letter destination itself: the ${consumer}'s stream event source mapping's on-failure queue (cdk-nag recognises only redrive targets). Nothing consumes it; ${whatTheOperatorDoes}`,
  });
  return queue;
}

/** Subscribes `fn` to the table's stream, records matching `filters` only. */
export function consumeTableStream(
  fn: ServiceFunction,
  data: DataStore,
  opts: { failureQueue: sqs.IQueue; filters: readonly Record<string, unknown>[] },
): void {
  fn.role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'],
      resources: [data.table.tableStreamArn ?? ''],
    }),
  );
  const { role } = fn;
  const { failureQueue } = opts;
  fn.fn.addEventSourceMapping('TableStream', {
    eventSourceArn: data.table.tableStreamArn,
    // The stream's last 24 h too: both consumers are idempotent per record.
    startingPosition: lambda.StartingPosition.TRIM_HORIZON,
    batchSize: 100,
    maxBatchingWindow: Duration.seconds(0),
    reportBatchItemFailures: true,
    retryAttempts: STREAM_RETRY_ATTEMPTS,
    maxRecordAge: STREAM_MAX_RECORD_AGE,
    bisectBatchOnError: true,
    // Only SendMessage on its own queue (CDK's SqsDlq would add GetQueueAttributes and GetQueueUrl).
    onFailure: {
      bind: () => {
        grantSendToQueue(role, failureQueue);
        return { destination: failureQueue.queueArn };
      },
    },
    filters: opts.filters.map((pattern) => lambda.FilterCriteria.filter(structuredClone(pattern) as Record<string, unknown>)),
  });
}
