/** The kill switch's fan-out in the CDK stack: filtered to agent items, capped retries, a failure queue that alarms. */
import { KILL_SWITCH_FANOUT_ENTRY } from '../../lib/kill-switch-fanout';
import { STREAM_MAX_RECORD_AGE, STREAM_RETRY_ATTEMPTS } from '../../lib/webhook-pipeline';
import { logicalId, synthesize } from './support';

const { stack, template } = synthesize();
const fnId = logicalId(stack, stack.killSwitch.fn.fn as never);

describe('kill switch fan-out (CDK)', () => {
  it('is fed agent items written or removed from the table stream, with partial batch failures, capped retries and a failure queue', () => {
    const failures = logicalId(stack, stack.killSwitch.failureQueue);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: fnId },
      EventSourceArn: { 'Fn::GetAtt': [logicalId(stack, stack.data.table), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: STREAM_RETRY_ATTEMPTS,
      MaximumRecordAgeInSeconds: STREAM_MAX_RECORD_AGE.toSeconds(),
      BisectBatchOnFunctionError: true,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [failures, 'Arn'] } } },
      FilterCriteria: {
        Filters: [
          { Pattern: JSON.stringify({ eventName: ['INSERT', 'MODIFY'], dynamodb: { NewImage: { type: { S: ['Agent'] } } } }) },
          { Pattern: JSON.stringify({ eventName: ['REMOVE'], dynamodb: { OldImage: { type: { S: ['Agent'] } } } }) },
        ],
      },
    });
    expect(stack.killSwitch.fn.entry).toBe(KILL_SWITCH_FANOUT_ENTRY);
    template.hasResourceProperties('AWS::SQS::Queue', { SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 86_400 });
    for (const [name, threshold] of [
      ['KillSwitchFanOutFailures', 1],
      ['KillSwitchFanOutErrors', 1],
      ['KillSwitchFanOutIteratorAge', 2_000],
    ] as const) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmName: `agent-payment-service-test-${name}`, Threshold: threshold });
    }
  });
});
