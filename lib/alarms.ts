/**
 * Alarms as data: an `AlarmSpec` says what one alarm watches and when it fires; `addAlarm` makes
 * it, named `agent-payment-service-<stage>-<id>`, with its alarm and OK actions on the stage's
 * topic. lib/monitoring.ts and lib/webhook-pipeline.ts each keep a table of them; a scheduled
 * function builds its own two (lib/scheduled-function.ts).
 */
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

/** One alarm: what it watches and when it fires. Unless said otherwise: ≥ threshold, 1 period, missing data not breaching. */
export interface AlarmSpec {
  /** Construct id, and the end of the alarm's name. */
  id: string;
  description: string;
  metric: cloudwatch.IMetric;
  threshold: number;
  comparison?: cloudwatch.ComparisonOperator;
  evaluationPeriods?: number;
  datapointsToAlarm?: number;
  missingData?: cloudwatch.TreatMissingData;
}

/** The name of the stage's alarm `id` (`*` for all of them, in the topic's policy). */
export const alarmName = (stage: string, id: string): string => `agent-payment-service-${stage}-${id}`;

/** The alarm of one spec, in `scope` under the spec's id, notifying `topic` when it fires and when it clears. */
export function addAlarm(scope: Construct, stage: string, topic: sns.ITopic, spec: AlarmSpec): cloudwatch.Alarm {
  const alarm = new cloudwatch.Alarm(scope, spec.id, {
    alarmName: alarmName(stage, spec.id),
    alarmDescription: spec.description,
    metric: spec.metric,
    threshold: spec.threshold,
    comparisonOperator: spec.comparison ?? cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods: spec.evaluationPeriods ?? 1,
    ...(spec.datapointsToAlarm !== undefined ? { datapointsToAlarm: spec.datapointsToAlarm } : {}),
    treatMissingData: spec.missingData ?? cloudwatch.TreatMissingData.NOT_BREACHING,
  });
  const action = new actions.SnsAction(topic);
  alarm.addAlarmAction(action);
  alarm.addOkAction(action);
  return alarm;
}
