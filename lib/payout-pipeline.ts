/**
 * The payout pipeline: the payout queue and its dead-letter queue (a QueueWithDlq), the worker that
 * consumes it (partial batch failures, bounded batch and concurrency), and the scheduled reconciler
 * (a ScheduledFunction) that re-sends committed payouts that never reached the queue and finishes
 * stale ones.
 */
import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import type { Construct } from 'constructs';
import { BACKGROUND_GRANTS } from '../functions/store/access';
import type { DataStore } from './data-store';
import { grantConsumeQueue, grantReadSecrets, grantSendToQueue, grantTable } from './grants';
import { QueueWithDlq } from './queue-with-dlq';
import { ScheduledFunction } from './scheduled-function';
import { ServiceFunction } from './service-function';
import type { HotWalletSigner } from './signer';
import { PAYPAL_BASE_URLS, reservedConcurrency, type StageConfig } from './stage-config';
import { x402Environment } from './x402';

export const WORKER_ENTRY = 'functions/payout-worker/handler.ts';
export const RECONCILER_ENTRY = 'functions/reconciler/handler.ts';

/** A payout may wait on Solana confirmation or PayPal; one batch gets this long. */
export const WORKER_TIMEOUT = Duration.seconds(60);
/** The reconciler finishes before the next sweep starts, so two sweeps never overlap. */
export const reconcilerTimeout = (everyMinutes: number): Duration => Duration.seconds(Math.min(90, everyMinutes * 60 - 10));

/**
 * How long a worker or reconciler run holds a payout it drives (config.ts PAYOUT_LEASE_SECONDS):
 * longer than either function can run, so a live attempt never loses its payout to another,
 * and within the queue's visibility timeout, so a crashed attempt's payout is free again by the
 * time its message reappears.
 */
export const payoutLeaseSeconds = (reconcilerTimeoutValue: Duration): number =>
  Math.max(WORKER_TIMEOUT.toSeconds(), reconcilerTimeoutValue.toSeconds()) + 30;

export class PayoutPipeline extends QueueWithDlq {
  readonly worker: ServiceFunction;
  /** The reconciler and its schedule (a ScheduledFunction under the id `Default`: its children keep their paths). */
  readonly reconcilerSchedule: ScheduledFunction;
  readonly reconciler: ServiceFunction;
  readonly schedule: events.Rule;

  constructor(scope: Construct, id: string, props: { config: StageConfig; data: DataStore; signer: HotWalletSigner }) {
    const { config, data, signer } = props;
    super(scope, id, {
      // Six times the worker's timeout (AWS's guidance for an SQS event source): a batch Lambda still
      // retries is never handed to a second worker.
      visibilityTimeout: Duration.seconds(WORKER_TIMEOUT.toSeconds() * 6),
      retentionPeriod: Duration.days(4),
      maxReceiveCount: config.payoutMaxReceives,
    });

    const reconcilerTimeoutValue = reconcilerTimeout(config.reconcileEveryMinutes);
    const railEnvironment = {
      TABLE_NAME: data.table.tableName,
      PAYOUT_QUEUE_URL: this.queue.queueUrl,
      PAYOUT_MAX_RECEIVES: String(config.payoutMaxReceives),
      PAYOUT_LEASE_SECONDS: String(payoutLeaseSeconds(reconcilerTimeoutValue)),
      // The URL itself is a secret: a provider URL usually carries its API key.
      SOLANA_RPC_URL_SECRET_ARN: data.solanaRpcUrl.secretArn,
      USDC_MINT: config.usdcMint,
      SOLANA_COMMITMENT: config.solanaCommitment,
      // A payout's transaction is signed by the hot-wallet signer (lib/signer.ts), which alone holds the key.
      ...signer.environment,
      PAYPAL_BASE_URL: PAYPAL_BASE_URLS[config.paypalMode],
      PAYPAL_CREDENTIALS_SECRET_ARN: data.paypalCredentials.secretArn,
    };
    // The hot wallet's key is not among them: a payout's transaction is signed by the signer (lib/signer.ts).
    const railSecrets = [data.solanaRpcUrl, data.paypalCredentials];

    this.worker = new ServiceFunction(this, 'Worker', {
      entry: WORKER_ENTRY,
      description: 'Payout worker: pays withdrawals from the payout queue (Solana USDC, PayPal USD)',
      // The Solana libraries and ed25519 signing: more memory is also more CPU for cold start.
      memorySize: 1024,
      timeout: WORKER_TIMEOUT,
      config,
      environment: railEnvironment,
      // Payouts never wait for the API's burst to leave room; and never exceed what the rails are sized for.
      reservedConcurrency: reservedConcurrency(config, config.payoutWorkerReservedConcurrency ?? config.workerMaxConcurrency),
    });
    grantTable(this.worker.role, data.table, BACKGROUND_GRANTS['payout-worker']);
    grantConsumeQueue(this.worker.role, this.queue);
    grantReadSecrets(this.worker.role, railSecrets);
    signer.grantInvoke(this.worker.role);
    this.worker.fn.addEventSourceMapping('PayoutQueue', {
      eventSourceArn: this.queue.queueArn,
      batchSize: config.workerBatchSize,
      // Only the failed payouts of a batch come back; the paid ones are deleted.
      reportBatchItemFailures: true,
      // Bounds the load on the RPC node, on PayPal and on the hot wallet.
      maxConcurrency: config.workerMaxConcurrency,
    });

    this.reconcilerSchedule = new ScheduledFunction(this, 'Default', {
      functionId: 'Reconciler',
      entry: RECONCILER_ENTRY,
      description: 'Reconciler: re-sends PENDING payouts that never reached the queue, finishes stale PROCESSING ones',
      memorySize: 1024,
      timeout: reconcilerTimeoutValue,
      config,
      // x402: it asks the chain about settlements and credits them (never signs with the x402 settings).
      environment: { ...railEnvironment, ...x402Environment(config, data) },
      // One sweep at a time, and room for it however busy the API is.
      reservedConcurrency: reservedConcurrency(config, config.reconcilerReservedConcurrency),
      data,
      table: BACKGROUND_GRANTS.reconciler,
      secrets: railSecrets,
      // A failed sweep is not retried by Lambda's async retries either; the next one covers it.
      retryFailedRuns: false,
      scheduleDescription: 'Runs the payout reconciler',
      schedule: events.Schedule.rate(Duration.minutes(config.reconcileEveryMinutes)),
      // A missed sweep is simply done by the next one: no retries piling up behind a slow run.
      delivery: { retryAttempts: 0, maxEventAge: Duration.minutes(config.reconcileEveryMinutes) },
    });
    this.reconciler = this.reconcilerSchedule.fn;
    this.schedule = this.reconcilerSchedule.schedule;
    grantSendToQueue(this.reconciler.role, this.queue);
    // It re-signs an expired payout's transaction, as the worker does.
    signer.grantInvoke(this.reconciler.role);
  }
}
