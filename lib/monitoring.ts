/**
 * Alarms, all sent to one SNS topic (with an e-mail subscription when `alarmEmail` is set):
 *
 * | alarm | fires when |
 * | --- | --- |
 * | PayoutDlqNotEmpty | any payout message reached the dead-letter queue (a payout gave up after PAYOUT_MAX_RECEIVES tries) |
 * | PayoutQueueBacklog | the oldest payout message has waited 15 minutes (worker behind, throttled or failing) |
 * | PayoutWorkerThrottles | Lambda throttled the payout worker |
 * | PayoutWorkerErrors | the worker threw (a whole batch failed, not one payout) in a 5-minute period |
 * | Api5xxRate | more than `api5xxRatePercent` % of API requests answered 5xx over 5 minutes with at least `api5xxMinRequests` requests (a 5xx is always a bug) |
 * | PayoutsStuckProcessing | the reconciler reported payouts PROCESSING past RECONCILE_PROCESSING_AFTER_SECONDS for 15 minutes |
 * | ReconcilerErrors | the reconciler failed in 2 of the last 3 5-minute periods |
 * | ReconcilerNotRunning | the reconciler was not invoked for 15 minutes (schedule disabled or broken) |
 * | PayoutRailNeedsOperator | a rail reported the platform's own account short of funds or misconfigured |
 * | SweeperErrors | the charge sweeper failed in 2 of the last 3 5-minute periods |
 * | SweeperNotRunning | the charge sweeper was not invoked for 15 minutes (schedule disabled or broken) |
 * | ChargesNotExpiring | the sweeper logged an error (a due charge it could not expire) in each of 3 consecutive 5-minute periods |
 * | TopupFailed | a PayPal top-up ended FAILED (another currency captured, or a capture PENDING past the window; docs/topups.md) |
 * | TopupReversed | PayPal took money back from a top-up (a reversal or refund; the payer debited, any shortfall owed) |
 *
 * Stuck payouts are measured by the reconciler, not inferred from the DLQ: a payout can be stuck
 * in PROCESSING with no message anywhere (e.g. a Solana transaction never confirmed, a PayPal
 * payout UNCLAIMED), and only a sweep over the table sees it. The metric's contract is in
 * functions/observability/metric-names.ts (STUCK_PAYOUTS_METRIC).
 *
 * PayoutRailNeedsOperator counts, from the worker's and reconciler's JSON logs, the two rail
 * errors no retry can cure (functions/rails/errors.ts): PlatformFundsError (top up the hot wallet
 * or the PayPal balance) and RailConfigError (secret, mint or credentials wrong). Payouts wait
 * meanwhile; this says so within minutes instead of when the DLQ fills.
 *
 * ChargesNotExpiring counts the ERROR lines of the sweeper's JSON logs: the sweep survives one
 * charge's failure (functions/use-cases/expiry.ts logs it and goes on), so the function's Errors
 * metric never sees a charge that fails on every run while its hold stays with the user. Three
 * periods in a row: a failure the next run (a minute later) cures pages nobody.
 */
import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  FAILED_TOPUPS_METRIC,
  METRICS_NAMESPACE,
  metricDimensions,
  OPERATOR_RAIL_ERRORS,
  RAIL_NEEDS_OPERATOR_METRIC,
  STUCK_PAYOUTS_METRIC,
  TOPUP_FAILED_LOG_MESSAGE,
  TOPUP_REVERSALS_METRIC,
  TOPUP_REVERSED_LOG_MESSAGE,
  UNMATCHED_LOG_MESSAGE,
  UNMATCHED_TOPUP_PAYMENTS_METRIC,
} from '../functions/observability/metric-names';
import type { ServiceFunction } from './service-function';
import type { StageConfig } from './stage-config';

export interface MonitoringProps {
  config: StageConfig;
  api: apigw.IHttpApi;
  payoutQueue: sqs.IQueue;
  deadLetterQueue: sqs.IQueue;
  worker: ServiceFunction;
  reconciler: ServiceFunction;
  sweeper: ServiceFunction;
  /** Top-ups (docs/topups.md): the watcher, and the webhook route that also credits. */
  topupWatcher?: ServiceFunction;
  paypalWebhook?: ServiceFunction;
}

const FIVE_MINUTES = Duration.minutes(5);
/** A withdrawal normally leaves the queue within seconds; one waiting this long is stuck behind something. */
export const PAYOUT_QUEUE_MAX_AGE = Duration.minutes(15);

export { OPERATOR_RAIL_ERRORS, RAIL_NEEDS_OPERATOR_METRIC };

/** ERROR lines in the charge sweeper's log group (a log metric filter; nothing emits it directly). */
export const SWEEPER_ERROR_LOGS_METRIC = 'SweeperErrorLogs';

export class Monitoring extends Construct {
  readonly topic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[] = [];
  private readonly stage: string;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const { config } = props;
    this.stage = config.stage;

    this.topic = new sns.Topic(this, 'AlarmTopic', { displayName: `Agent Payment Service alarms (${config.stage})`, enforceSSL: true });
    // enforceSSL gives the topic a resource policy holding only its Deny, which replaces SNS's
    // default policy: without this Allow, CloudWatch (a service principal, not an IAM identity of
    // this account) could not publish and every alarm action would fail silently. The conditions
    // keep it to this account's alarms of this stage (confused-deputy protection).
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowThisStagesAlarms',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': Stack.of(this).account },
          ArnLike: { 'aws:SourceArn': this.alarmArn('*') },
        },
      }),
    );
    if (config.alarmEmail) this.topic.addSubscription(new subscriptions.EmailSubscription(config.alarmEmail));

    this.alarm('PayoutDlqNotEmpty', {
      alarmDescription:
        'Payout messages are in the dead-letter queue. Each is a payout that failed PAYOUT_MAX_RECEIVES times: inspect and redrive (docs/deploy.md).',
      metric: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum' }),
      threshold: 1,
      evaluationPeriods: 1,
    });

    this.alarm('PayoutQueueBacklog', {
      alarmDescription: `The oldest payout message has waited ${PAYOUT_QUEUE_MAX_AGE.toMinutes()} minutes: the worker is not keeping up, is throttled or failing (a withdrawal is waiting).`,
      metric: props.payoutQueue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: 'Maximum' }),
      threshold: PAYOUT_QUEUE_MAX_AGE.toSeconds(),
      evaluationPeriods: 1,
    });

    this.alarm('PayoutWorkerThrottles', {
      alarmDescription:
        'Lambda throttled the payout worker (account or reserved concurrency exhausted): payouts wait. Check the account concurrency and workerMaxConcurrency.',
      metric: props.worker.fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
      threshold: 1,
      evaluationPeriods: 1,
    });

    this.alarm('PayoutWorkerErrors', {
      alarmDescription: 'The payout worker threw (a whole batch failed). See the worker log group.',
      metric: props.worker.fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
      threshold: 1,
      evaluationPeriods: 1,
    });

    this.alarm('Api5xxRate', {
      alarmDescription: `More than ${config.api5xxRatePercent}% of API requests answered 5xx over 5 minutes (evaluated from ${config.api5xxMinRequests} requests on).`,
      metric: new cloudwatch.MathExpression({
        // Below the floor the rate is 0: a single 5xx among a handful of requests is not a rate.
        expression: `IF(requests >= ${config.api5xxMinRequests}, 100 * errors / requests, 0)`,
        usingMetrics: {
          errors: props.api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' }),
          requests: props.api.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' }),
        },
        label: '5xx %',
        period: FIVE_MINUTES,
      }),
      threshold: config.api5xxRatePercent,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
    });

    this.alarm('PayoutsStuckProcessing', {
      alarmDescription:
        'Payouts stay PROCESSING past RECONCILE_PROCESSING_AFTER_SECONDS and the reconciler could not finish them for 15 minutes. Check the reconciler and worker logs, the Solana RPC and PayPal.',
      metric: new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName: STUCK_PAYOUTS_METRIC,
        dimensionsMap: metricDimensions(config.stage),
        period: FIVE_MINUTES,
        statistic: 'Maximum',
      }),
      threshold: 1,
      evaluationPeriods: 3,
    });

    this.alarm('ReconcilerErrors', {
      alarmDescription: 'The payout reconciler failed in 2 of the last 3 five-minute periods.',
      metric: props.reconciler.fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
      threshold: 1,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    });

    this.alarm('ReconcilerNotRunning', {
      alarmDescription: 'The payout reconciler has not run for 15 minutes: its schedule is disabled or broken.',
      metric: props.reconciler.fn.metricInvocations({ period: Duration.minutes(15), statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: 1,
      // No invocations means no data points at all: that is exactly the failure.
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    });

    const pattern = logs.FilterPattern.any(
      ...OPERATOR_RAIL_ERRORS.map((name) => logs.FilterPattern.stringValue('$.error.name', '=', name)),
    );
    this.logAlarm('PayoutRailNeedsOperator', {
      filters: [props.worker, props.reconciler].map((fn) => ({ id: `${fn.node.id}RailNeedsOperator`, logGroup: fn.logGroup })),
      pattern,
      metricName: RAIL_NEEDS_OPERATOR_METRIC,
      evaluationPeriods: 1,
      description:
        "A payout rail reported PlatformFundsError (top up the hot wallet's SOL/USDC or the PayPal balance), RailConfigError (rail secret, USDC mint or PayPal credentials wrong) or RailAmbiguousAnswerError (PayPal answered in a way that does not say whether a payout exists: look the batch up by its sender_batch_id = payoutId). Payouts wait until it is fixed.",
    });
    this.alarm('SweeperErrors', {
      alarmDescription:
        'The charge sweeper failed in 2 of the last 3 five-minute periods: due PENDING charges are not expiring (holds stay). See its log group.',
      metric: props.sweeper.fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
      threshold: 1,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    });

    this.alarm('SweeperNotRunning', {
      alarmDescription:
        'The charge sweeper has not run for 15 minutes: its schedule is disabled or broken (due PENDING charges keep their holds).',
      metric: props.sweeper.fn.metricInvocations({ period: Duration.minutes(15), statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    });

    this.logAlarm('ChargesNotExpiring', {
      filters: [{ id: 'SweeperErrorLogs', logGroup: props.sweeper.logGroup }],
      pattern: logs.FilterPattern.stringValue('$.level', '=', 'ERROR'),
      metricName: SWEEPER_ERROR_LOGS_METRIC,
      evaluationPeriods: 3,
      description:
        'The charge sweeper logged errors for 15 minutes in a row: a due PENDING charge fails to expire on every run and its hold stays with the user. Look for "could not expire a pending charge" in its log group.',
    });

    if (props.topupWatcher) this.topupAlarms(props.topupWatcher, props.paypalWebhook);
  }

  /** The watcher's alarms, as the reconciler's (errors, not running), plus money that matched no top-up. */
  private topupAlarms(watcher: ServiceFunction, webhook: ServiceFunction | undefined): void {
    this.alarm('TopupWatcherErrors', {
      alarmDescription:
        'The top-up watcher failed in 2 of the last 3 five-minute periods: USDC deposits are not credited. See its log group.',
      metric: watcher.fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
      threshold: 1,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    });
    this.alarm('TopupWatcherNotRunning', {
      alarmDescription: 'The top-up watcher has not run for 15 minutes: its schedule is disabled or broken (top-ups are not credited).',
      metric: watcher.fn.metricInvocations({ period: Duration.minutes(15), statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    });
    this.logAlarm('UnmatchedTopupPayment', {
      filters: [watcher, ...(webhook ? [webhook] : [])].map((fn) => ({ id: `${fn.node.id}UnmatchedTopupPayments`, logGroup: fn.logGroup })),
      pattern: logs.FilterPattern.stringValue('$.message', '=', UNMATCHED_LOG_MESSAGE),
      metricName: UNMATCHED_TOPUP_PAYMENTS_METRIC,
      evaluationPeriods: 1,
      description:
        'Money reached the platform that credits no top-up (no or an expired reference, a wrong mint, a second payment, a capture after expiry). It is recorded as an UNMATCHED#<signature> item: refund or credit it by hand (docs/topups.md).',
    });
    this.logAlarm('TopupFailed', {
      filters: [watcher, ...(webhook ? [webhook] : [])].map((fn) => ({ id: `${fn.node.id}FailedTopups`, logGroup: fn.logGroup })),
      pattern: logs.FilterPattern.stringValue('$.message', '=', TOPUP_FAILED_LOG_MESSAGE),
      metricName: FAILED_TOPUPS_METRIC,
      evaluationPeriods: 1,
      description:
        'A PayPal top-up ended FAILED: PayPal captured another currency, or kept the capture PENDING past the window. The log line names the top-up and the capture: look at it in PayPal and refund or credit it by hand (docs/topups.md).',
    });
    if (webhook) {
      this.logAlarm('TopupReversed', {
        filters: [{ id: `${webhook.node.id}TopupReversals`, logGroup: webhook.logGroup }],
        pattern: logs.FilterPattern.stringValue('$.message', '=', TOPUP_REVERSED_LOG_MESSAGE),
        metricName: TOPUP_REVERSALS_METRIC,
        evaluationPeriods: 1,
        description:
          'PayPal took money back from a top-up (PAYMENT.CAPTURE.REVERSED / REFUNDED). The log line says what was done (outcome): the payer debited and any shortfall owed, or why nothing could be (a capture never credited, more than credited). Look at the dispute or refund in PayPal (docs/topups.md).',
      });
    }
  }

  /**
   * An alarm on log lines: a metric filter per log group counting matching lines into one metric
   * (per stage), and an alarm when any five-minute period of `evaluationPeriods` in a row has one.
   */
  private logAlarm(
    id: string,
    opts: {
      filters: { id: string; logGroup: logs.ILogGroup }[];
      pattern: logs.IFilterPattern;
      metricName: string;
      evaluationPeriods: number;
      description: string;
    },
  ): void {
    for (const filter of opts.filters) {
      new logs.MetricFilter(this, filter.id, {
        logGroup: filter.logGroup,
        filterPattern: opts.pattern,
        metricNamespace: METRICS_NAMESPACE,
        metricName: opts.metricName,
        metricValue: '1',
        // Every log line carries the stage (functions/observability/logger.ts).
        dimensions: { stage: '$.stage' },
      });
    }
    this.alarm(id, {
      alarmDescription: opts.description,
      metric: new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName: opts.metricName,
        dimensionsMap: { stage: this.stage },
        period: FIVE_MINUTES,
        statistic: 'Sum',
      }),
      threshold: 1,
      evaluationPeriods: opts.evaluationPeriods,
    });
  }

  /** ARN of this stage's alarm `id` (`*` for all of them). */
  alarmArn(id: string): string {
    return Stack.of(this).formatArn({
      service: 'cloudwatch',
      resource: 'alarm',
      resourceName: this.alarmName(id),
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
  }

  private alarmName(id: string): string {
    return `agent-payment-service-${this.stage}-${id}`;
  }

  private alarm(id: string, props: Omit<cloudwatch.AlarmProps, 'actionsEnabled'>): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, id, {
      alarmName: this.alarmName(id),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      ...props,
    });
    const action = new actions.SnsAction(this.topic);
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
    this.alarms.push(alarm);
    return alarm;
  }
}
