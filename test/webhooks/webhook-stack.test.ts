/** The webhook pipeline in the CDK stack: stream, filtered dispatcher, queue + DLQ, delivery worker, the key. */
import { Match } from 'aws-cdk-lib/assertions';
import { DEFAULT_RETRY_SCHEDULE_SECONDS } from '../../functions/core/webhooks';
import { DELIVERY_ENTRY, DISPATCHER_ENTRY, STREAM_MAX_RECORD_AGE, STREAM_RETRY_ATTEMPTS } from '../../lib/webhook-pipeline';
import { logicalId, synthesize } from '../cdk/support';

const { stack, template } = synthesize();
const fnId = (fn: { fn: object }) => logicalId(stack, fn.fn as never);

describe('webhook pipeline (CDK)', () => {
  it('gives the table a stream with old and new images', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', { StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' } });
  });

  it('feeds the dispatcher only new outbox items, new charge items, modified agent items and modified grants (their limit alerts), with partial batch failures', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: fnId(stack.webhooks.dispatcher) },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack, stack.data.table), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      FilterCriteria: {
        Filters: [
          { Pattern: JSON.stringify({ eventName: ['INSERT'], dynamodb: { NewImage: { type: { S: ['Outbox'] } } } }) },
          { Pattern: JSON.stringify({ eventName: ['INSERT'], dynamodb: { NewImage: { type: { S: ['Charge'] } } } }) },
          { Pattern: JSON.stringify({ eventName: ['MODIFY'], dynamodb: { NewImage: { type: { S: ['Agent'] } } } }) },
          { Pattern: JSON.stringify({ eventName: ['MODIFY'], dynamodb: { NewImage: { type: { S: ['Grant'] } } } }) },
        ],
      },
    });
    expect(stack.webhooks.dispatcher.entry).toBe(DISPATCHER_ENTRY);
  });

  it("caps the dispatcher's retries and record age, halves a failing batch, and leaves what it gives up on in an encrypted, TLS-only queue that alarms", () => {
    const failures = logicalId(stack, stack.webhooks.streamFailureQueue);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: fnId(stack.webhooks.dispatcher) },
      MaximumRetryAttempts: STREAM_RETRY_ATTEMPTS,
      MaximumRecordAgeInSeconds: STREAM_MAX_RECORD_AGE.toSeconds(),
      BisectBatchOnFunctionError: true,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [failures, 'Arn'] } } },
    });
    // A cap, and below the stream's own 24 h.
    expect(STREAM_RETRY_ATTEMPTS).toBeGreaterThan(0);
    expect(STREAM_MAX_RECORD_AGE.toSeconds()).toBeLessThan(86_400);
    const all = template.toJSON().Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>;
    expect(all[failures]?.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 86_400 });
    const policy = Object.values(all).find(
      (r) => r.Type === 'AWS::SQS::QueuePolicy' && JSON.stringify(r.Properties.Queues).includes(failures),
    );
    expect(policy?.Properties.PolicyDocument).toMatchObject({
      Statement: [expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })],
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'agent-payment-service-test-WebhookStreamFailures',
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [failures, 'QueueName'] } }],
      Threshold: 1,
    });
    expect(Object.keys(template.toJSON().Outputs)).toEqual(expect.arrayContaining(['WebhookQueueUrl', 'WebhookStreamFailureQueueUrl']));
  });

  it('delivers from the queue with partial batch failures; the queue outlives the retry schedule and has a DLQ', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: fnId(stack.webhooks.delivery) },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack, stack.webhooks.queue), 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
    });
    const queue = template.toJSON().Resources[logicalId(stack, stack.webhooks.queue)].Properties;
    const schedule = DEFAULT_RETRY_SCHEDULE_SECONDS.reduce((a, b) => a + b, 0);
    expect(queue.MessageRetentionPeriod).toBeGreaterThan(schedule);
    expect(queue.RedrivePolicy).toMatchObject({
      deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(stack, stack.webhooks.deadLetterQueue), 'Arn'] },
      maxReceiveCount: DEFAULT_RETRY_SCHEDULE_SECONDS.length + 1 + 5,
    });
    expect(stack.webhooks.delivery.entry).toBe(DELIVERY_ENTRY);
  });

  it('gives the delivery worker and the create routes the webhook key, and nothing else', () => {
    const keyArn = { 'Fn::GetAtt': [logicalId(stack, stack.data.webhookSecretsKey), 'Arn'] };
    template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: Match.absent(),
      Environment: { Variables: Match.objectLike({ WEBHOOK_KMS_KEY_ID: keyArn, WEBHOOK_QUEUE_URL: Match.anyValue() }) },
    });
    template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      Description: Match.stringLikeRegexp('webhook signing secrets'),
    });
    const env = template.toJSON().Resources[fnId(stack.webhooks.delivery)].Properties.Environment.Variables;
    expect(env.WEBHOOK_ALLOW_LOOPBACK).toBeUndefined();
    expect(env.WEBHOOK_LOCAL_SECRET_KEY).toBeUndefined();
  });
});
