/**
 * The top-up watcher (functions/topup-watcher, docs/topups.md): every minute it credits finalized
 * USDC payments that carry a pending top-up's reference, polls PENDING PayPal orders (the fallback
 * for a lost webhook), expires top-ups past their window, and records payments to the deposit
 * wallet that match no top-up. Its alarms (errors, not running, unmatched payments) are in
 * lib/monitoring.ts, like the reconciler's.
 */
import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import type { Construct } from 'constructs';
import { BACKGROUND_GRANTS } from '../functions/store/access';
import type { DataStore } from './data-store';
import { ScheduledFunction } from './scheduled-function';
import { PAYPAL_BASE_URLS, reservedConcurrency, type StageConfig } from './stage-config';

export const TOPUP_WATCHER_ENTRY = 'functions/topup-watcher/handler.ts';
export const TOPUP_WATCH_EVERY = Duration.minutes(1);
/** A run ends before the next one starts, so two rarely overlap (and overlapping is safe). */
export const TOPUP_WATCHER_TIMEOUT = Duration.seconds(50);

/** PayPal's Orders API (the credentials only as an ARN): the webhook route's whole need. */
export function paypalOrdersEnvironment(config: StageConfig, data: DataStore): Record<string, string> {
  return { PAYPAL_BASE_URL: PAYPAL_BASE_URLS[config.paypalMode], PAYPAL_CREDENTIALS_SECRET_ARN: data.paypalCredentials.secretArn };
}

/** What opening and watching top-ups needs (the create route, the watcher): the mint, the deposit wallet, PayPal. */
export function topupEnvironment(config: StageConfig, data: DataStore): Record<string, string> {
  return {
    USDC_MINT: config.usdcMint,
    ...(config.depositAddress ? { SOLANA_DEPOSIT_ADDRESS: config.depositAddress } : {}),
    ...paypalOrdersEnvironment(config, data),
    ...(config.topupReturnUrl ? { TOPUP_RETURN_URL: config.topupReturnUrl } : {}),
  };
}

export class TopupWatcher extends ScheduledFunction {
  constructor(scope: Construct, id: string, props: { config: StageConfig; data: DataStore }) {
    const { config, data } = props;
    super(scope, id, {
      entry: TOPUP_WATCHER_ENTRY,
      description: 'Top-up watcher: credits finalized USDC deposits by reference, polls PayPal orders, records unmatched payments',
      timeout: TOPUP_WATCHER_TIMEOUT,
      config,
      environment: {
        TABLE_NAME: data.table.tableName,
        // The URL is a secret (a provider URL carries its key); the watcher only reads the chain.
        SOLANA_RPC_URL_SECRET_ARN: data.solanaRpcUrl.secretArn,
        ...topupEnvironment(config, data),
      },
      reservedConcurrency: reservedConcurrency(config, config.topupWatcherReservedConcurrency),
      // Pending top-ups through GSI1, the lookups, one crediting transaction per payment.
      data,
      table: BACKGROUND_GRANTS['topup-watcher'],
      // The RPC URL and PayPal's credentials; never the hot wallet (it signs nothing).
      secrets: [data.solanaRpcUrl, data.paypalCredentials],
      // A failed run is not retried: the next one, a minute later, starts from what the chain and PayPal say.
      retryFailedRuns: false,
      scheduleDescription: 'Runs the top-up watcher',
      schedule: events.Schedule.rate(TOPUP_WATCH_EVERY),
      delivery: { retryAttempts: 0, maxEventAge: TOPUP_WATCH_EVERY },
    });
  }
}
