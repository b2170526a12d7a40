/**
 * The reconciler as a scheduled function: one sweep of stale in-flight payouts per invocation
 * (use-cases/payouts/payouts.ts `reconcilePayouts`, which drives payouts with the worker's own code),
 * then the StuckPayouts gauge that lib/monitoring.ts alarms on, and the hot wallet's SOL
 * (HotWalletLamports: it pays every USDC payout's fee, with x402 on or off); then, given the x402 facilitator,
 * x402 settlements whose settle died (`reconcileX402`) and the second check of credited ones at
 * `finalized` (`checkX402Finality`). x402 not configured yet (no treasury or fee payer) skips them.
 * Last, the x402 purchases the service paid (`reconcilePurchases`), and the X402PurchasesUnsearched
 * gauge: those no search has yet reached back far enough for to release or capture.
 *
 * Each sweep has a deadline from the Lambda's remaining time (run-deadlines.ts) and stops cleanly
 * at it, and one sweep's failure does not skip the ones after it (the run still fails, after them).
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { X402UnavailableError } from '../core/x402';
import { logger } from '../observability/logger';
import {
  HOT_WALLET_LAMPORTS_METRIC,
  STUCK_PAYOUTS_METRIC,
  STUCK_X402_REFUNDS_METRIC,
  X402_PURCHASES_UNSEARCHED_METRIC,
} from '../observability/metric-names';
import { flushMetrics, metrics } from '../observability/metrics';
import { serializeError } from '../observability/serialize-error';
import { type PayoutDeps, type ReconcileReport, reconcilePayouts } from '../use-cases/payouts/payouts';
import {
  checkX402Finality,
  reconcileX402,
  type X402FinalityReport,
  type X402ReconcileReport,
} from '../use-cases/x402-facilitator/x402-reconcile';
import { type PurchaseReconcileReport, reconcilePurchases } from '../use-cases/x402-purchases/purchase-reconcile';
import type { Facilitator } from '../x402/facilitator';
import type { PurchaseChain } from '../x402/purchase-chain';
import { type RunDeadlines, runDeadlines } from './run-deadlines';

export type ReconcilerReport = ReconcileReport & {
  x402?: X402ReconcileReport & { finality: X402FinalityReport };
  purchases?: PurchaseReconcileReport;
};
export type Reconciler = (event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) => Promise<ReconcilerReport>;

export interface ReconcilerDeps extends PayoutDeps {
  /** The x402 facilitator (read-only: the reconciler asks the chain and credits, it never signs). */
  x402Facilitator?: () => Promise<Facilitator>;
  /** The chain as x402 purchases are settled by it (read-only: their transfers found, their blockhashes' expiry). */
  purchaseChain?: () => Promise<PurchaseChain>;
  /** The hot wallet's SOL in lamports (functions/rails `hotWalletLamports`), reported on every run. */
  hotWalletLamports?: () => Promise<number>;
}

/** Time one payout may take (a Solana confirmation wait, PayPal timeouts) that a run keeps in hand. */
const ONE_PAYOUT_MS = 40_000;

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const clock = () => deps.clock?.() ?? new Date();
  return async (_event, context) => {
    const run = runDeadlines(context?.getRemainingTimeInMillis?.());
    let x402: ReconcilerReport['x402'];
    let purchases: PurchaseReconcileReport | undefined;
    const failures: unknown[] = [];
    const sweep = async <T>(name: string, work: () => Promise<T | undefined>): Promise<T | undefined> => {
      try {
        return await work();
      } catch (error) {
        if (error instanceof X402UnavailableError) return undefined;
        failures.push(error);
        logger().error(`reconciler ${name} sweep failed`, { error: serializeError(error) });
        return undefined;
      }
    };
    const report = await sweep('payout', () => reconcilePayouts({ ...deps, ...payoutStart(run) }));
    if (report) metrics().addMetric(STUCK_PAYOUTS_METRIC, MetricUnit.Count, report.stuck);
    if (report) metrics().addMetric(STUCK_X402_REFUNDS_METRIC, MetricUnit.Count, report.stuckRefunds);
    if (deps.hotWalletLamports) await reportHotWallet(deps.hotWalletLamports);
    try {
      const facilitator = deps.x402Facilitator ? await sweep('x402', deps.x402Facilitator) : undefined;
      if (facilitator) {
        const settled = await sweep('x402', () => reconcileX402(facilitator, clock(), deadline(run, 'x402')));
        const finality = await sweep('x402 finality', () => checkX402Finality(facilitator, clock(), deadline(run, 'finality')));
        if (settled && finality) x402 = { ...settled, finality };
      }
      const chain = deps.purchaseChain ? await sweep('purchase', deps.purchaseChain) : undefined;
      if (chain) purchases = await sweep('purchase', () => reconcilePurchases(chain, { now: clock(), ...deadline(run, 'purchases') }));
      // On every purchase sweep, 0 included, so the alarm clears once none is left.
      if (purchases) metrics().addMetric(X402_PURCHASES_UNSEARCHED_METRIC, MetricUnit.Count, purchases.unsearched);
    } finally {
      // With the x402 sweep's: the hot wallet's SOL and the fees of the settlements it ended.
      flushMetrics();
    }
    if (failures.length > 0 || !report) throw failures[0];
    return { ...report, ...(x402 ? { x402 } : {}), ...(purchases ? { purchases } : {}) };
  };
}

/**
 * The HotWalletSolLow alarm's reading. One that fails (the RPC node, the hot wallet not set up yet)
 * is logged and skipped: the payouts were swept already, and the alarm treats a missing reading as
 * not breaching (a wallet that cannot be read cannot pay either: PayoutRailNeedsOperator says so).
 */
async function reportHotWallet(read: () => Promise<number>): Promise<void> {
  try {
    metrics().addMetric(HOT_WALLET_LAMPORTS_METRIC, MetricUnit.Count, await read());
  } catch (error) {
    logger().warn("could not read the hot wallet's SOL", { error: serializeError(error) });
  }
}

/**
 * Payouts are started until their deadline, and never later than one payout's time before the
 * run's end: one already started is never cut off mid-payment.
 */
function payoutStart(run: RunDeadlines): { startBefore?: number } {
  const own = run.deadlineOf('payouts');
  if (own === undefined || run.end === undefined) return {};
  return { startBefore: Math.min(own, run.end - ONE_PAYOUT_MS) };
}

const deadline = (run: RunDeadlines, sweep: Parameters<RunDeadlines['deadlineOf']>[0]): { deadline?: number } => {
  const at = run.deadlineOf(sweep);
  return at === undefined ? {} : { deadline: at };
};
