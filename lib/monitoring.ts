/**
 * Alarms, all sent to one SNS topic (with an e-mail subscription when `alarmEmail` is set), and the
 * service's CloudWatch dashboard. The alarms are a table (`alarmSpecs`; lib/alarms.ts): one entry
 * per alarm, what it watches, when it fires, what to look at first; a scheduled function's "errors"
 * and "not running" entries come from the ScheduledFunction itself. The webhook pipeline's alarms
 * are its own table in lib/webhook-pipeline.ts (same topic); docs/operating/alarms.md "Alarms" lists them all.
 *
 * Stuck payouts are measured by the reconciler, not inferred from the DLQ: a payout can be stuck
 * in PROCESSING with no message anywhere (e.g. a Solana transaction never confirmed, a PayPal
 * payout UNCLAIMED), and only a sweep over the table sees it. The metric's contract is in
 * functions/observability/metric-names.ts (STUCK_PAYOUTS_METRIC), like the sweeper's lag, the
 * daily audit's problems and the hot wallet's SOL spend (X402FeePayerLamports per landed x402
 * settlement, and the reconciler's HotWalletLamports gauge: the wallet pays payout fees too), and
 * the x402 purchases its search could not reach back to (X402PurchasesUnsearched).
 *
 * Some metrics come from log lines (metric filters): PayoutRailNeedsOperator counts the two rail
 * errors no retry can cure in the worker's and reconciler's logs; ChargesNotExpiring the sweeper's
 * ERROR lines (one charge's failure does not fail the run, so the Errors metric never sees a
 * charge that fails on every run); UnmatchedTopupPayment money that credits no top-up;
 * X402FinalityMismatch and X402CreditHeldAtLimit the x402 settlements an operator must look at
 * (a credit the chain took back; a payment owed to an agent whose balance is at its cap);
 * TransferCreditedElsewhere a second credit of one transfer the CHAINCREDIT# guard refused; and the API
 * access log gives 5xx per route and the 429s. Why the access log for those two: a route handler
 * answers its own failures with a 500 (functions/http/handler.ts), so Lambda's Errors metric never
 * counts them; API Gateway's per-route metrics need detailed metrics (custom metrics billed per
 * route); and its 4xx metric cannot tell a 429 from a 404. Each access log line carries routeKey and
 * status. A metric filter's dimensions can only be log fields and the access log has no stage, so
 * those metric names carry the stage (two stages in one account stay apart).
 */
import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ROUTES, type RouteSpec } from '../functions/api/routes';
import {
  FAILED_TOPUPS_METRIC,
  HOT_WALLET_LAMPORTS_METRIC,
  LEDGER_AUDIT_PROBLEMS_METRIC,
  METRICS_NAMESPACE,
  metricDimensions,
  OPERATOR_RAIL_ERRORS,
  RAIL_NEEDS_OPERATOR_METRIC,
  STUCK_PAYOUTS_METRIC,
  STUCK_X402_REFUNDS_METRIC,
  SWEEPER_LAG_METRIC,
  TOPUP_FAILED_LOG_MESSAGE,
  TOPUP_REVERSALS_METRIC,
  TOPUP_REVERSED_LOG_MESSAGE,
  TRANSFER_CREDITED_ELSEWHERE_LOG_MESSAGE,
  TRANSFERS_CREDITED_ELSEWHERE_METRIC,
  UNMATCHED_LOG_MESSAGE,
  UNMATCHED_TOPUP_PAYMENTS_METRIC,
  X402_BALANCE_LIMIT_LOG_MESSAGE,
  X402_CREDITS_HELD_AT_LIMIT_METRIC,
  X402_FEE_PAYER_LAMPORTS_METRIC,
  X402_FINALITY_MISMATCH_LOG_MESSAGE,
  X402_FINALITY_MISMATCHES_METRIC,
  X402_PURCHASES_UNSEARCHED_METRIC,
} from '../functions/observability/metric-names';
import { type AlarmSpec, addAlarm, alarmName } from './alarms';
import { routeConstructId, routeKey } from './http-api';
import type { ScheduledFunction } from './scheduled-function';
import type { ServiceFunction } from './service-function';
import type { StageConfig } from './stage-config';
import type { WebhookPipeline } from './webhook-pipeline';

export interface MonitoringProps {
  config: StageConfig;
  api: apigw.IHttpApi;
  /** The API's access log group: one JSON line per request, with `routeKey` and `status` (lib/http-api.ts). */
  accessLogs: logs.ILogGroup;
  /** The routes served (for the money routes' 5xx alarms); ROUTES by default. */
  routes?: readonly RouteSpec[];
  table: dynamodb.ITable;
  payoutQueue: sqs.IQueue;
  deadLetterQueue: sqs.IQueue;
  worker: ServiceFunction;
  reconciler: ScheduledFunction;
  sweeper: ScheduledFunction;
  /** Top-ups (docs/topups.md): the watcher, and the webhook route that also credits. */
  topupWatcher?: ScheduledFunction;
  paypalWebhook?: ServiceFunction;
  /** The x402 settle route (docs/x402.md): it logs a credit its agent's balance cap refused, as the reconciler does on each retry. */
  x402Settle?: ServiceFunction;
  /** For the dashboard: the webhook queues and functions (their alarms are the pipeline's own). */
  webhooks?: WebhookPipeline;
  /** The daily ledger audit (lib/ledger-audit.ts). */
  ledgerAudit?: ScheduledFunction;
}

const FIVE_MINUTES = Duration.minutes(5);
/** A withdrawal normally leaves the queue within seconds; one waiting this long is stuck behind something. */
export const PAYOUT_QUEUE_MAX_AGE = Duration.minutes(15);
/**
 * X402CreditHeldAtLimit's period: the reconciler logs a held credit once per run, so a period of at
 * least one run interval and a minute (5 minutes at the least) always holds a line while it is held:
 * the alarm stays on until the credit goes through, and its OK then means the agent was paid.
 */
export const heldAtLimitPeriod = (reconcileEveryMinutes: number): Duration =>
  Duration.minutes(Math.max(FIVE_MINUTES.toMinutes(), reconcileEveryMinutes + 1));
/**
 * X402FeePayerSpend: x402 network fees the hot wallet may pay in an hour (X402FeePayerLamports)
 * before it pages, 0.1 SOL: about 10,000 stock payments (10,001 lamports each), 5,000 at the caps
 * (20,000). Far more is a flood of payments or of fee-heavy ones; raise it with real volume.
 */
export const X402_FEE_SPEND_ALARM_LAMPORTS_PER_HOUR = 100_000_000;
/** HotWalletSolLow: the hot wallet's SOL (it pays x402 and payout fees and token-account rent) below 0.1 SOL. */
export const HOT_WALLET_MIN_LAMPORTS = 100_000_000;
/** The sweeper runs every minute (expiry lags ≤ 60 s by design); five minutes late is behind. */
export const SWEEPER_MAX_LAG = Duration.minutes(5);

/**
 * Routes that move money, each with a 5xx alarm of its own: a 5xx there leaves a client unsure
 * whether money moved (it must retry with its Idempotency-Key), so one is worth a page. By name
 * (functions/api/routes.ts); a test holds each to an existing route. The x402 ones: settle credits
 * an agent and spends the fee payer's SOL; a purchase holds the payer's USDC and has the hot wallet
 * sign its transfer (on create, or on the first read after approval); its receipt captures it.
 */
export const MONEY_ROUTES = [
  'create-charge',
  'capture-charge',
  'release-charge',
  'refund-charge',
  'withdraw',
  'admin-credit-user',
  'approval-decide',
  'user-approve-charge',
  'user-decline-charge',
  'user-release-charge',
  'paypal-webhook',
  'x402-settle',
  'agent-x402-purchase-create',
  'agent-x402-purchase-get',
  'agent-x402-purchase-receipt',
  'agent-x402-refund-create',
] as const;

/** DynamoDB operations the service sends (the throttle alarm sums their ThrottledRequests). */
const TABLE_OPERATIONS = [
  dynamodb.Operation.GET_ITEM,
  dynamodb.Operation.BATCH_GET_ITEM,
  dynamodb.Operation.QUERY,
  dynamodb.Operation.SCAN,
  dynamodb.Operation.PUT_ITEM,
  dynamodb.Operation.UPDATE_ITEM,
  dynamodb.Operation.DELETE_ITEM,
  dynamodb.Operation.TRANSACT_WRITE_ITEMS,
];
/**
 * Transaction conflicts: every charge of one payer updates the payer's item (DESIGN §18), so two at
 * once conflict and one is retried (functions/store/transact.ts). Some are normal; this share of
 * the transactions, sustained, means one hot item serialises its traffic.
 */
export const CONFLICT_RATE_PERCENT = 5;
/** ...counted only over five minutes with at least this many transactions. */
export const CONFLICT_MIN_TRANSACTIONS = 100;
/**
 * The daily audit's alarm window: a day and two hours of hourly periods, all of which must breach
 * (missing data breaches). A day's good data point keeps it OK, so a run a few minutes late never
 * pages; a failed audit pages once the previous day's good point leaves the window (about 2 h);
 * no data point for 26 h (the audit died, or its schedule did) pages too.
 */
export const LEDGER_AUDIT_WINDOW_HOURS = 26;

export { OPERATOR_RAIL_ERRORS, RAIL_NEEDS_OPERATOR_METRIC };

/** ERROR lines in the charge sweeper's log group (a log metric filter; nothing emits it directly). */
export const SWEEPER_ERROR_LOGS_METRIC = 'SweeperErrorLogs';
/** 5xx access log lines, per route (dimension routeKey), of one stage. */
export const api5xxByRouteMetric = (stage: string) => `Api5xxByRoute-${stage}`;
/** 429 access log lines (throttled by API Gateway) of one stage. */
export const api429Metric = (stage: string) => `Api429-${stage}`;

export class Monitoring extends Construct {
  readonly topic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly dashboard: cloudwatch.Dashboard;
  private readonly stage: string;
  /** Alarms of other constructs, for the dashboard's alarm widget (addAlarmsToDashboard). */
  private readonly otherAlarms: cloudwatch.IAlarm[] = [];

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

    this.logMetricFilters(props);
    for (const spec of this.alarmSpecs(props)) this.alarm(spec);
    this.dashboard = this.buildDashboard(props);
  }

  /** Every alarm of this construct, in the order of docs/operating/alarms.md's table. */
  private alarmSpecs(props: MonitoringProps): AlarmSpec[] {
    const { config } = props;
    const five = { period: FIVE_MINUTES, statistic: 'Sum' } as const;
    const serviceMetric = (metricName: string, statistic: string, period = FIVE_MINUTES) =>
      new cloudwatch.Metric({ namespace: METRICS_NAMESPACE, metricName, dimensionsMap: metricDimensions(config.stage), period, statistic });
    const logMetric = (metricName: string, period = FIVE_MINUTES) =>
      new cloudwatch.Metric({ namespace: METRICS_NAMESPACE, metricName, dimensionsMap: { stage: config.stage }, period, statistic: 'Sum' });
    const requests = props.api.metricCount(five);
    const routes = props.routes ?? ROUTES;

    const specs: AlarmSpec[] = [
      // Payouts.
      {
        id: 'PayoutDlqNotEmpty',
        description:
          'Payout messages are in the dead-letter queue. Each is a payout that failed PAYOUT_MAX_RECEIVES times: inspect and redrive (docs/deploy.md).',
        metric: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: FIVE_MINUTES, statistic: 'Maximum' }),
        threshold: 1,
      },
      {
        id: 'PayoutQueueBacklog',
        description: `The oldest payout message has waited ${PAYOUT_QUEUE_MAX_AGE.toMinutes()} minutes: the worker is not keeping up, is throttled or failing (a withdrawal is waiting).`,
        metric: props.payoutQueue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: 'Maximum' }),
        threshold: PAYOUT_QUEUE_MAX_AGE.toSeconds(),
      },
      {
        id: 'PayoutWorkerThrottles',
        description:
          'Lambda throttled the payout worker (account or reserved concurrency exhausted): payouts wait. Check the account concurrency and workerMaxConcurrency.',
        metric: props.worker.fn.metricThrottles(five),
        threshold: 1,
      },
      {
        id: 'PayoutWorkerErrors',
        description: 'The payout worker threw (a whole batch failed). See the worker log group.',
        metric: props.worker.fn.metricErrors(five),
        threshold: 1,
      },
      // The API.
      {
        id: 'Api5xxRate',
        description: `More than ${config.api5xxRatePercent}% of API requests answered 5xx over 5 minutes (evaluated from ${config.api5xxMinRequests} requests on).`,
        metric: new cloudwatch.MathExpression({
          // Below the floor the rate is 0: a single 5xx among a handful of requests is not a rate.
          expression: `IF(requests >= ${config.api5xxMinRequests}, 100 * errors / requests, 0)`,
          usingMetrics: { errors: props.api.metricServerError(five), requests },
          label: '5xx %',
          period: FIVE_MINUTES,
        }),
        threshold: config.api5xxRatePercent,
        comparison: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      },
      ...MONEY_ROUTES.map((name): AlarmSpec => {
        const route = routes.find((r) => r.name === name);
        if (!route) throw new Error(`MONEY_ROUTES names ${name}, which is not a route`);
        return {
          id: `Route5xx${routeConstructId(route)}`,
          description: `${routeKey(route)} answered 5xx (access log): a client may not know whether money moved. See the route's log group and the access log.`,
          metric: this.route5xxMetric(routeKey(route)),
          threshold: 1,
        };
      }),
      {
        id: 'Api429Rate',
        description: `More than ${config.api429RatePercent}% of API requests were throttled (429) over 5 minutes (evaluated from ${config.api5xxMinRequests} requests on): clients are turned away. Compare with the stage and route throttles (docs/deploy.md).`,
        metric: new cloudwatch.MathExpression({
          expression: `IF(requests >= ${config.api5xxMinRequests}, 100 * throttled / requests, 0)`,
          usingMetrics: {
            throttled: new cloudwatch.Metric({ namespace: METRICS_NAMESPACE, metricName: api429Metric(config.stage), ...five }),
            requests,
          },
          label: '429 %',
          period: FIVE_MINUTES,
        }),
        threshold: config.api429RatePercent,
        comparison: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      },
      // The table.
      {
        id: 'DynamoDbThrottles',
        description:
          'DynamoDB throttled requests to the table in 2 of the last 3 five-minute periods (on demand: a partition over its limit, or traffic past twice its previous peak). Requests answer 503 once the SDK retries run out.',
        metric: props.table.metricThrottledRequestsForOperations({ operations: TABLE_OPERATIONS, period: FIVE_MINUTES }),
        threshold: 1,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
      },
      {
        id: 'DynamoDbTransactionConflicts',
        description: `More than ${CONFLICT_RATE_PERCENT}% of the table's transactions met a conflict in 2 of the last 3 five-minute periods (from ${CONFLICT_MIN_TRANSACTIONS} transactions on): one hot item (a payer, an agent) serialises its traffic (DESIGN 18).`,
        metric: new cloudwatch.MathExpression({
          expression: `IF(transactions >= ${CONFLICT_MIN_TRANSACTIONS}, 100 * conflicts / transactions, 0)`,
          usingMetrics: {
            conflicts: new cloudwatch.Metric({
              namespace: 'AWS/DynamoDB',
              metricName: 'TransactionConflict',
              dimensionsMap: { TableName: props.table.tableName },
              ...five,
            }),
            // Every successful request has a latency sample: their count is the transactions that went through.
            transactions: new cloudwatch.Metric({
              namespace: 'AWS/DynamoDB',
              metricName: 'SuccessfulRequestLatency',
              dimensionsMap: { TableName: props.table.tableName, Operation: dynamodb.Operation.TRANSACT_WRITE_ITEMS },
              period: FIVE_MINUTES,
              statistic: 'SampleCount',
            }),
          },
          label: 'conflicts %',
          period: FIVE_MINUTES,
        }),
        threshold: CONFLICT_RATE_PERCENT,
        comparison: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
      },
      // The reconciler.
      {
        id: 'PayoutsStuckProcessing',
        description:
          'Payouts stay PROCESSING past RECONCILE_PROCESSING_AFTER_SECONDS and the reconciler could not finish them for 15 minutes. Check the reconciler and worker logs, the Solana RPC and PayPal.',
        metric: serviceMetric(STUCK_PAYOUTS_METRIC, 'Maximum'),
        threshold: 1,
        evaluationPeriods: 3,
      },
      {
        id: 'X402RefundsStuck',
        description:
          "Refunds of x402 payments stayed PROCESSING past RECONCILE_PROCESSING_AFTER_SECONDS for 15 minutes (StuckX402Refunds, the reconciler's gauge; they count in PayoutsStuckProcessing too). The agent was debited and the buyer is owed the USDC: most often the hot wallet lacks USDC for the transfer or SOL for the fee and a missing token account's rent (PlatformFundsError, PayoutRailNeedsOperator). Top it up from the treasury (docs/operating/runbooks.md, 'Hot wallet funds for refunds'); each refund is then paid once.",
        metric: serviceMetric(STUCK_X402_REFUNDS_METRIC, 'Maximum'),
        threshold: 1,
        evaluationPeriods: 3,
      },
      props.reconciler.errorAlarm('ReconcilerErrors', 'The payout reconciler failed in 2 of the last 3 five-minute periods.'),
      props.reconciler.notRunningAlarm(
        'ReconcilerNotRunning',
        'The payout reconciler has not run for 15 minutes: its schedule is disabled or broken.',
      ),
      {
        id: 'PayoutRailNeedsOperator',
        description:
          "A payout rail reported PlatformFundsError (top up the hot wallet's SOL/USDC or the PayPal balance), RailConfigError (rail secret, USDC mint or PayPal credentials wrong) or RailAmbiguousAnswerError (PayPal answered in a way that does not say whether a payout exists: look the batch up by its sender_batch_id = payoutId). Payouts wait until it is fixed.",
        metric: logMetric(RAIL_NEEDS_OPERATOR_METRIC),
        threshold: 1,
      },
      {
        id: 'X402FinalityMismatch',
        description:
          "An x402 settlement credited at 'confirmed' failed on chain or did not reach 'finalized' within X402_FINALITY_MAX_SECONDS (the reconciler's ERROR line names the signature, the agent and the amount). The agent holds a credit the treasury may not: look the transaction up and, if it is gone, debit the agent by hand (docs/x402.md).",
        metric: logMetric(X402_FINALITY_MISMATCHES_METRIC),
        threshold: 1,
      },
      {
        id: 'X402CreditHeldAtLimit',
        description:
          "A confirmed x402 payment could not be credited: the agent's USDC balance is at its cap (MAX_BALANCE_MINOR on every balance shard). The USDC is in the treasury and owed to the agent; the settlement stays PENDING and the reconciler tries the credit again on every run, so this alarm stays on until the agent withdraws (or the cap is raised), then the next run credits it once and the alarm clears. The ERROR line 'x402 credit refused: balance limit' in the reconciler's (or x402-settle's) log group names the signature, the agent and the amount; the settlement is item X402TX#<messageHash>, the line's messageHash (docs/x402.md).",
        // A period that always holds a reconciler run, so the alarm stays on while the credit is held.
        metric: logMetric(X402_CREDITS_HELD_AT_LIMIT_METRIC, heldAtLimitPeriod(config.reconcileEveryMinutes)),
        threshold: 1,
      },
      {
        id: 'TransferCreditedElsewhere',
        description:
          "A rail refused to credit an on-chain transaction another rail had already credited (the CHAINCREDIT#<signature> guard): nothing was credited twice, but it should never happen. A deposit wallet that is also the x402 treasury (config load and synth refuse it), or a transfer built to be both a top-up and an x402 payment. The ERROR line 'transfer already credited by another rail' in the top-up watcher's, x402-settle's or the reconciler's log group names the rail, the signature and the top-up or agent; the guard item CHAINCREDIT#<signature> says which rail credited it (docs/operating/alarms.md).",
        metric: logMetric(TRANSFERS_CREDITED_ELSEWHERE_METRIC),
        threshold: 1,
      },
      {
        id: 'X402PurchasesUnsearched',
        description:
          "x402 purchases the service paid for stayed PENDING past their blockhash for 15 minutes because the reconciler's search of the hot wallet token account (at most 20,000 signatures a search, newest first) did not reach back to where their transfer could be (X402PurchasesUnsearched, the reconciler's gauge: every such purchase, searched this run or waiting out its backoff of 1 min doubling to 1 h; its WARN line 'x402 purchase past its blockhash, its transfer not searched for far enough back' names each charge). Other purchases are not held up, but these payers' USDC stays held until the agent's receipt, a search that reaches it, or the operator's 'npm run admin -- resolve-purchase <chargeId>': someone may be burying them by spamming the account with small transfers (docs/operating/runbooks.md).",
        // A period that always holds a reconciler run; three in a row: one run's lagging RPC node is not worth a page.
        metric: serviceMetric(X402_PURCHASES_UNSEARCHED_METRIC, 'Maximum', heldAtLimitPeriod(config.reconcileEveryMinutes)),
        threshold: 1,
        evaluationPeriods: 3,
      },
      {
        id: 'X402FeePayerSpend',
        description: `The hot wallet paid more than ${X402_FEE_SPEND_ALARM_LAMPORTS_PER_HOUR / 1e9} SOL of x402 network fees in an hour (X402FeePayerLamports: what each landed settlement cost the fee payer; one settlement is capped by X402_MAX_COMPUTE_UNITS, X402_MAX_PRIORITY_FEE_MICROLAMPORTS and X402_MAX_SIGNATURES). A flood of payments, or of payments priced at the caps: look at x402-settle's traffic and the settlements' fees (docs/x402.md).`,
        metric: serviceMetric(X402_FEE_PAYER_LAMPORTS_METRIC, 'Sum', Duration.hours(1)),
        threshold: X402_FEE_SPEND_ALARM_LAMPORTS_PER_HOUR,
      },
      {
        id: 'HotWalletSolLow',
        description: `The hot wallet holds less than ${HOT_WALLET_MIN_LAMPORTS / 1e9} SOL (HotWalletLamports, read by the reconciler on each run, x402 on or off). It pays the network fees of x402 settlements and USDC payouts and the rent of the token accounts payouts create: top it up before payouts fail with PlatformFundsError (docs/deploy.md).`,
        // A period that always holds a reconciler run.
        metric: serviceMetric(HOT_WALLET_LAMPORTS_METRIC, 'Minimum', heldAtLimitPeriod(config.reconcileEveryMinutes)),
        threshold: HOT_WALLET_MIN_LAMPORTS,
        comparison: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      },
      // The charge sweeper.
      props.sweeper.errorAlarm(
        'SweeperErrors',
        'The charge sweeper failed in 2 of the last 3 five-minute periods: due PENDING charges are not expiring (holds stay). See its log group.',
      ),
      props.sweeper.notRunningAlarm(
        'SweeperNotRunning',
        'The charge sweeper has not run for 15 minutes: its schedule is disabled or broken (due PENDING charges keep their holds).',
      ),
      {
        id: 'ChargesNotExpiring',
        description:
          'The charge sweeper logged errors for 15 minutes in a row: a due PENDING charge fails to expire on every run and its hold stays with the user. Look for "could not expire a pending charge" in its log group.',
        metric: logMetric(SWEEPER_ERROR_LOGS_METRIC),
        threshold: 1,
        evaluationPeriods: 3,
      },
      {
        id: 'SweeperLag',
        description: `The oldest due PENDING charge was ${SWEEPER_MAX_LAG.toMinutes()} minutes past its expiresAt when a sweep started (SweeperLagSeconds): the sweeper is behind (more due than sweepMaxPerRun) or a charge keeps failing to expire; holds wait.`,
        metric: serviceMetric(SWEEPER_LAG_METRIC, 'Maximum'),
        threshold: SWEEPER_MAX_LAG.toSeconds(),
      },
    ];

    if (props.topupWatcher) {
      specs.push(
        props.topupWatcher.errorAlarm(
          'TopupWatcherErrors',
          'The top-up watcher failed in 2 of the last 3 five-minute periods: USDC deposits are not credited. See its log group.',
        ),
        props.topupWatcher.notRunningAlarm(
          'TopupWatcherNotRunning',
          'The top-up watcher has not run for 15 minutes: its schedule is disabled or broken (top-ups are not credited).',
        ),
        {
          id: 'UnmatchedTopupPayment',
          description:
            'Money reached the platform that credits no top-up (no or an expired reference, a wrong mint, a second payment, a capture after expiry). It is recorded as an UNMATCHED#<signature> item: refund or credit it by hand (docs/topups.md).',
          metric: logMetric(UNMATCHED_TOPUP_PAYMENTS_METRIC),
          threshold: 1,
        },
        {
          id: 'TopupFailed',
          description:
            'A PayPal top-up ended FAILED: PayPal captured another currency, or kept the capture PENDING past the window. The log line names the top-up and the capture: look at it in PayPal and refund or credit it by hand (docs/topups.md).',
          metric: logMetric(FAILED_TOPUPS_METRIC),
          threshold: 1,
        },
      );
    }
    if (props.paypalWebhook) {
      specs.push({
        id: 'TopupReversed',
        description:
          'PayPal took money back from a top-up (PAYMENT.CAPTURE.REVERSED / REFUNDED). The log line says what was done (outcome): the payer debited and any shortfall owed, or why nothing could be (a capture never credited, more than credited). Look at the dispute or refund in PayPal (docs/topups.md).',
        metric: logMetric(TOPUP_REVERSALS_METRIC),
        threshold: 1,
      });
    }

    if (props.ledgerAudit) {
      specs.push({
        id: 'LedgerAuditFails',
        description: `The daily ledger audit found the ledger does not hold (LedgerAuditProblems > 0: its ERROR log line names the problems), or has not reported for ${LEDGER_AUDIT_WINDOW_HOURS} hours (it died or its schedule is off). Run npm run audit against the table, docs/deploy.md.`,
        metric: serviceMetric(LEDGER_AUDIT_PROBLEMS_METRIC, 'Maximum', Duration.hours(1)),
        threshold: 1,
        evaluationPeriods: LEDGER_AUDIT_WINDOW_HOURS,
        datapointsToAlarm: LEDGER_AUDIT_WINDOW_HOURS,
        missingData: cloudwatch.TreatMissingData.BREACHING,
      });
    }
    return specs;
  }

  /** The metric filters behind the log-derived metrics (construct ids kept: they name the filters). */
  private logMetricFilters(props: MonitoringProps): void {
    const railPattern = logs.FilterPattern.any(
      ...OPERATOR_RAIL_ERRORS.map((name) => logs.FilterPattern.stringValue('$.error.name', '=', name)),
    );
    for (const fn of [props.worker, props.reconciler.fn]) {
      this.stageFilter(`${fn.node.id}RailNeedsOperator`, fn.logGroup, railPattern, RAIL_NEEDS_OPERATOR_METRIC);
    }
    this.stageFilter(
      'ReconcilerX402FinalityMismatches',
      props.reconciler.fn.logGroup,
      logs.FilterPattern.stringValue('$.message', '=', X402_FINALITY_MISMATCH_LOG_MESSAGE),
      X402_FINALITY_MISMATCHES_METRIC,
    );
    for (const fn of [props.reconciler.fn, ...(props.x402Settle ? [props.x402Settle] : [])]) {
      this.stageFilter(
        `${fn.node.id}X402CreditsHeldAtLimit`,
        fn.logGroup,
        logs.FilterPattern.stringValue('$.message', '=', X402_BALANCE_LIMIT_LOG_MESSAGE),
        X402_CREDITS_HELD_AT_LIMIT_METRIC,
      );
    }
    // The CHAINCREDIT# guard's refusal is logged where a rail credits on-chain money: the top-up
    // watcher (USDC top-ups), x402-settle and the reconciler (x402 credits).
    for (const fn of [
      props.reconciler.fn,
      ...(props.x402Settle ? [props.x402Settle] : []),
      ...(props.topupWatcher ? [props.topupWatcher.fn] : []),
    ]) {
      this.stageFilter(
        `${fn.node.id}TransfersCreditedElsewhere`,
        fn.logGroup,
        logs.FilterPattern.stringValue('$.message', '=', TRANSFER_CREDITED_ELSEWHERE_LOG_MESSAGE),
        TRANSFERS_CREDITED_ELSEWHERE_METRIC,
      );
    }
    this.stageFilter(
      'SweeperErrorLogs',
      props.sweeper.fn.logGroup,
      logs.FilterPattern.stringValue('$.level', '=', 'ERROR'),
      SWEEPER_ERROR_LOGS_METRIC,
    );
    if (props.topupWatcher) {
      for (const fn of [props.topupWatcher.fn, ...(props.paypalWebhook ? [props.paypalWebhook] : [])]) {
        this.stageFilter(
          `${fn.node.id}UnmatchedTopupPayments`,
          fn.logGroup,
          logs.FilterPattern.stringValue('$.message', '=', UNMATCHED_LOG_MESSAGE),
          UNMATCHED_TOPUP_PAYMENTS_METRIC,
        );
        this.stageFilter(
          `${fn.node.id}FailedTopups`,
          fn.logGroup,
          logs.FilterPattern.stringValue('$.message', '=', TOPUP_FAILED_LOG_MESSAGE),
          FAILED_TOPUPS_METRIC,
        );
      }
    }
    if (props.paypalWebhook) {
      this.stageFilter(
        `${props.paypalWebhook.node.id}TopupReversals`,
        props.paypalWebhook.logGroup,
        logs.FilterPattern.stringValue('$.message', '=', TOPUP_REVERSED_LOG_MESSAGE),
        TOPUP_REVERSALS_METRIC,
      );
    }
    // The access log: status is a JSON string there ("503"), hence the string patterns.
    new logs.MetricFilter(this, 'Api5xxByRoute', {
      logGroup: props.accessLogs,
      filterPattern: logs.FilterPattern.stringValue('$.status', '=', '5*'),
      metricNamespace: METRICS_NAMESPACE,
      metricName: api5xxByRouteMetric(props.config.stage),
      metricValue: '1',
      dimensions: { routeKey: '$.routeKey' },
    });
    new logs.MetricFilter(this, 'Api429', {
      logGroup: props.accessLogs,
      filterPattern: logs.FilterPattern.stringValue('$.status', '=', '429'),
      metricNamespace: METRICS_NAMESPACE,
      metricName: api429Metric(props.config.stage),
      metricValue: '1',
    });
  }

  /** A metric filter counting matching lines of a service log group into one metric per stage (every line carries it). */
  private stageFilter(id: string, logGroup: logs.ILogGroup, pattern: logs.IFilterPattern, metricName: string): void {
    new logs.MetricFilter(this, id, {
      logGroup,
      filterPattern: pattern,
      metricNamespace: METRICS_NAMESPACE,
      metricName,
      metricValue: '1',
      // Every log line carries the stage (functions/observability/logger.ts).
      dimensions: { stage: '$.stage' },
    });
  }

  private route5xxMetric(key: string, period = FIVE_MINUTES): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: METRICS_NAMESPACE,
      metricName: api5xxByRouteMetric(this.stage),
      dimensionsMap: { routeKey: key },
      period,
      statistic: 'Sum',
    });
  }

  /**
   * The golden signals on one page: latency (p50, p99), traffic, errors (5xx, 5xx per money route,
   * 429, function errors) and saturation (throttles of Lambda and DynamoDB, transaction
   * conflicts, queue depths and ages, the stream iterator, the sweeper's lag), then every alarm.
   */
  private buildDashboard(props: MonitoringProps): cloudwatch.Dashboard {
    const minute = Duration.minutes(1);
    const sum = { period: minute, statistic: 'Sum' } as const;
    const max = { period: minute, statistic: 'Maximum' } as const;
    const graph = (title: string, left: cloudwatch.IMetric[], right: cloudwatch.IMetric[] = [], width = 8) =>
      new cloudwatch.GraphWidget({ title, left, right, width, height: 6 });
    const routes = props.routes ?? ROUTES;
    const webhooks = props.webhooks;
    const background: [string, ServiceFunction | undefined][] = [
      ['payout worker', props.worker],
      ['reconciler', props.reconciler.fn],
      ['sweeper', props.sweeper.fn],
      ['top-up watcher', props.topupWatcher?.fn],
      ['webhook dispatcher', webhooks?.dispatcher],
      ['webhook delivery', webhooks?.delivery],
      ['ledger audit', props.ledgerAudit?.fn],
    ];
    const functions = background.filter((entry): entry is [string, ServiceFunction] => entry[1] !== undefined);
    const queueDepth = (label: string, queue: sqs.IQueue) => queue.metricApproximateNumberOfMessagesVisible({ ...max, label });
    const queueAge = (label: string, queue: sqs.IQueue) => queue.metricApproximateAgeOfOldestMessage({ ...max, label });

    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `agent-payment-service-${props.config.stage}`,
      defaultInterval: Duration.hours(3),
    });
    dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown: `# Agent Payment Service (${props.config.stage})\nGolden signals: latency, traffic, errors, saturation. Alarms at the bottom; runbooks in docs/deploy.md.`,
        width: 24,
        height: 2,
      }),
    );
    dashboard.addWidgets(
      graph('Latency (ms)', [
        props.api.metricLatency({ period: minute, statistic: 'p50', label: 'API p50' }),
        props.api.metricLatency({ period: minute, statistic: 'p99', label: 'API p99' }),
        new cloudwatch.Metric({
          namespace: 'AWS/ApiGateway',
          metricName: 'IntegrationLatency',
          dimensionsMap: { ApiId: props.api.apiId },
          period: minute,
          statistic: 'p99',
          label: 'integration p99',
        }),
      ]),
      graph(
        'Traffic (requests/min)',
        [props.api.metricCount({ ...sum, label: 'API requests' })],
        [
          props.worker.fn.metricInvocations({ ...sum, label: 'payout worker invocations' }),
          ...(webhooks ? [webhooks.delivery.fn.metricInvocations({ ...sum, label: 'webhook delivery invocations' })] : []),
        ],
      ),
      graph('API errors', [
        props.api.metricServerError({ ...sum, label: '5xx' }),
        props.api.metricClientError({ ...sum, label: '4xx' }),
        new cloudwatch.Metric({
          namespace: METRICS_NAMESPACE,
          metricName: api429Metric(props.config.stage),
          ...sum,
          label: '429 (throttled)',
        }),
      ]),
    );
    dashboard.addWidgets(
      graph(
        '5xx by money route',
        MONEY_ROUTES.flatMap((name) => {
          const route = routes.find((r) => r.name === name);
          return route ? [this.route5xxMetric(routeKey(route), minute).with({ label: routeKey(route) })] : [];
        }),
        [],
        12,
      ),
      graph(
        'Function errors',
        functions.map(([label, fn]) => fn.fn.metricErrors({ ...sum, label })),
        [],
        12,
      ),
    );
    dashboard.addWidgets(
      graph(
        'Saturation: throttles',
        [
          ...functions.map(([label, fn]) => fn.fn.metricThrottles({ ...sum, label: `${label} throttled` })),
          props.table.metricThrottledRequestsForOperations({ operations: TABLE_OPERATIONS, period: minute }),
        ],
        [
          new cloudwatch.Metric({
            namespace: 'AWS/DynamoDB',
            metricName: 'TransactionConflict',
            dimensionsMap: { TableName: props.table.tableName },
            ...sum,
            label: 'transaction conflicts',
          }),
        ],
      ),
      graph(
        'Saturation: queue depths',
        [
          queueDepth('payout queue', props.payoutQueue),
          queueDepth('payout DLQ', props.deadLetterQueue),
          ...(webhooks
            ? [
                queueDepth('webhook queue', webhooks.queue),
                queueDepth('webhook DLQ', webhooks.deadLetterQueue),
                queueDepth('stream failures', webhooks.streamFailureQueue),
              ]
            : []),
        ],
        [
          new cloudwatch.Metric({
            namespace: 'AWS/Lambda',
            metricName: 'ConcurrentExecutions',
            period: minute,
            statistic: 'Maximum',
            label: 'account concurrent executions',
          }),
        ],
      ),
      graph(
        'Saturation: waiting (s)',
        [
          queueAge('oldest payout message', props.payoutQueue),
          ...(webhooks ? [queueAge('oldest webhook message', webhooks.queue)] : []),
          new cloudwatch.Metric({
            namespace: METRICS_NAMESPACE,
            metricName: SWEEPER_LAG_METRIC,
            dimensionsMap: metricDimensions(props.config.stage),
            ...max,
            label: 'sweeper lag',
          }),
        ],
        webhooks
          ? [
              new cloudwatch.MathExpression({
                expression: 'age / 1000',
                usingMetrics: {
                  age: new cloudwatch.Metric({
                    namespace: 'AWS/Lambda',
                    metricName: 'IteratorAge',
                    dimensionsMap: { FunctionName: webhooks.dispatcher.fn.functionName },
                    ...max,
                  }),
                },
                label: 'dispatcher behind the stream',
                period: minute,
              }),
            ]
          : [],
      ),
    );
    // One alarm widget for every alarm of the stage, at the bottom: it reads the list when the
    // dashboard is rendered, so the alarms added later (addAlarmsToDashboard) land in it too.
    dashboard.addWidgets(new AllAlarmsWidget(() => [...this.alarms, ...this.otherAlarms]));
    return dashboard;
  }

  /** Lists these alarms too (other constructs' on the same topic, e.g. the webhook pipeline's) in the dashboard's alarm widget. */
  addAlarmsToDashboard(alarms: readonly cloudwatch.IAlarm[]): void {
    this.otherAlarms.push(...alarms);
  }

  /** ARN of this stage's alarm `id` (`*` for all of them). */
  alarmArn(id: string): string {
    return Stack.of(this).formatArn({
      service: 'cloudwatch',
      resource: 'alarm',
      resourceName: alarmName(this.stage, id),
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
  }

  private alarm(spec: AlarmSpec): cloudwatch.Alarm {
    const alarm = addAlarm(this, this.stage, this.topic, spec);
    this.alarms.push(alarm);
    return alarm;
  }
}

/**
 * The dashboard's alarm widget, placed when the dashboard is built but listing its alarms only when
 * the dashboard is rendered (at synth). Alarms made after the dashboard (the webhook pipeline's, the
 * kill switch's) join this one widget; a widget per call repeated every alarm of the stage.
 */
class AllAlarmsWidget implements cloudwatch.IWidget {
  readonly width = 24;
  readonly height = 6;
  private x = 0;
  private y = 0;

  constructor(private readonly alarms: () => readonly cloudwatch.IAlarm[]) {}

  position(x: number, y: number): void {
    this.x = x;
    this.y = y;
  }

  toJson(): unknown[] {
    const widget = new cloudwatch.AlarmStatusWidget({
      title: 'Alarms',
      alarms: [...new Set(this.alarms())],
      width: this.width,
      height: this.height,
      sortBy: cloudwatch.AlarmStatusWidgetSortBy.STATE_UPDATED_TIMESTAMP,
    });
    widget.position(this.x, this.y);
    return widget.toJson();
  }
}
