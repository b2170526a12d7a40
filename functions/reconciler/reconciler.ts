/**
 * The reconciler as a scheduled function: one sweep of stale in-flight payouts per invocation
 * (use-cases/payouts.ts `reconcilePayouts`, which drives payouts with the worker's own code),
 * then the StuckPayouts gauge that lib/monitoring.ts alarms on.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { STUCK_PAYOUTS_METRIC } from '../observability/metric-names';
import { flushMetrics, metrics } from '../observability/metrics';
import { type PayoutDeps, type ReconcileReport, reconcilePayouts } from '../use-cases/payouts';

export type Reconciler = (event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<ReconcileReport>;

/** Time one payout may take (a Solana confirmation wait, PayPal timeouts) that a run keeps in hand. */
const ONE_PAYOUT_MS = 40_000;

export function createReconciler(deps: PayoutDeps): Reconciler {
  return async (_event, context) => {
    const remaining = context?.getRemainingTimeInMillis?.();
    const report = await reconcilePayouts({
      ...deps,
      ...(remaining !== undefined ? { startBefore: Date.now() + remaining - ONE_PAYOUT_MS } : {}),
    });
    metrics().addMetric(STUCK_PAYOUTS_METRIC, MetricUnit.Count, report.stuck);
    flushMetrics();
    return report;
  };
}
