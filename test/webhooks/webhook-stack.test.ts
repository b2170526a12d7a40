/** The webhook pipeline in the CDK stack: stream, filtered dispatcher, queue + DLQ, delivery worker, the key. */
import { Match } from 'aws-cdk-lib/assertions';
import { DEFAULT_RETRY_SCHEDULE_SECONDS } from '../../functions/core/webhooks';
import { DELIVERY_ENTRY, DISPATCHER_ENTRY } from '../../lib/webhook-pipeline';
import { logicalId, synthesize } from '../cdk/support';

const { stack, template } = synthesize();
const fnId = (fn: { fn: object }) => logicalId(stack, fn.fn as never);

describe('webhook pipeline (CDK)', () => {
  it('gives the table a stream with old and new images', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', { StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' } });
  });

  it('feeds the dispatcher only new outbox items and modified agent items, with partial batch failures', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: fnId(stack.webhooks.dispatcher) },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack, stack.data.table), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      FilterCriteria: {
        Filters: [
          { Pattern: JSON.stringify({ eventName: ['INSERT'], dynamodb: { NewImage: { type: { S: ['Outbox'] } } } }) },
          { Pattern: JSON.stringify({ eventName: ['MODIFY'], dynamodb: { NewImage: { type: { S: ['Agent'] } } } }) },
        ],
      },
    });
    expect(stack.webhooks.dispatcher.entry).toBe(DISPATCHER_ENTRY);
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
