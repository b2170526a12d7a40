/**
 * The kill switch's fan-out (functions/kill-switch/fanout.ts, docs/data-model.md "Kill switch"):
 *
 *   table stream (NEW_AND_OLD_IMAGES) ──filter: agent items──▶ fan-out ──▶ the agent's balance shards
 *                                                                  └─ on failure: a note in its failure queue (alarms)
 *
 * An operator's flip of `enabled` on the agent item in the console reaches the shards a charge is
 * conditioned on within the stream's delay (typically well under a second). The function reads
 * agent items and writes balance shards, nothing else (BACKGROUND_GRANTS['kill-switch-fanout']).
 * Its mapping retries a failed record (partial batch failures, bisect on error), and gives up on
 * one only after STREAM_RETRY_ATTEMPTS or STREAM_MAX_RECORD_AGE, leaving a note in the failure
 * queue, which alarms: the operator then runs `npm run admin -- kill-switch-backfill --agent <id>`
 * (docs/operating/runbooks.md), which copies the agent item's switch again. The IteratorAge alarm says when it
 * falls behind (an operator's disable then takes longer than the 2 s it is given).
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FANOUT_FILTER_PATTERNS } from '../functions/kill-switch/stream-filter';
import { BACKGROUND_GRANTS } from '../functions/store/access';
import { type AlarmSpec, addAlarm } from './alarms';
import type { DataStore } from './data-store';
import { grantTable } from './grants';
import { ServiceFunction } from './service-function';
import type { StageConfig } from './stage-config';
import { consumeTableStream, streamFailureQueue } from './table-stream';

export const KILL_SWITCH_FANOUT_ENTRY = 'functions/kill-switch-fanout/handler.ts';

export class KillSwitchFanOut extends Construct {
  readonly fn: ServiceFunction;
  /** Notes of stream batches the fan-out gave up on (Lambda's on-failure destination). */
  readonly failureQueue: sqs.Queue;
  private readonly stage: string;

  constructor(scope: Construct, id: string, props: { config: StageConfig; data: DataStore }) {
    super(scope, id);
    const { config, data } = props;
    this.stage = config.stage;
    this.failureQueue = streamFailureQueue(
      this,
      'kill-switch fan-out',
      'an operator reads each note, runs the backfill for the agent and deletes it.',
    );
    this.fn = new ServiceFunction(this, 'Function', {
      entry: KILL_SWITCH_FANOUT_ENTRY,
      description: "Kill switch fan-out: copies an agent item's enabled flag and key hash to its balance shards",
      timeout: Duration.seconds(30),
      config,
      environment: { TABLE_NAME: data.table.tableName },
    });
    // Reads the agent item, writes the agent's balance shards: nothing else.
    grantTable(this.fn.role, data.table, BACKGROUND_GRANTS['kill-switch-fanout']);
    // Older agent items get their copy from the backfill (docs/operating/runbooks.md).
    consumeTableStream(this.fn, data, { failureQueue: this.failureQueue, filters: FANOUT_FILTER_PATTERNS });
  }

  /** The fan-out's alarms (docs/operating/alarms.md "Alarms"). */
  alarmSpecs(): AlarmSpec[] {
    const five = Duration.minutes(5);
    return [
      {
        id: 'KillSwitchFanOutFailures',
        description:
          "The kill-switch fan-out gave up on a stream batch: an agent item's enabled flag may not have reached its balance shards. Run npm run admin -- kill-switch-backfill for the agents named in the log (or all), then delete the message (docs/deploy.md).",
        metric: this.failureQueue.metricApproximateNumberOfMessagesVisible({ period: five, statistic: 'Maximum' }),
        threshold: 1,
      },
      {
        id: 'KillSwitchFanOutErrors',
        description: 'The kill-switch fan-out failed in 2 of the last 3 5-minute periods: console flips of enabled wait in the stream.',
        metric: this.fn.fn.metricErrors({ period: five, statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
      },
      {
        id: 'KillSwitchFanOutIteratorAge',
        description: 'The kill-switch fan-out is more than 2 s behind the table stream: a console disable takes longer than designed.',
        metric: new cloudwatch.Metric({
          namespace: 'AWS/Lambda',
          metricName: 'IteratorAge',
          dimensionsMap: { FunctionName: this.fn.fn.functionName },
          period: Duration.minutes(1),
          statistic: 'Maximum',
        }),
        threshold: 2_000,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
      },
    ];
  }

  addAlarms(topic: sns.ITopic): cloudwatch.Alarm[] {
    return this.alarmSpecs().map((spec) => addAlarm(this, this.stage, topic, spec));
  }
}
