/**
 * The reconciler as a scheduled function: one sweep of stale in-flight payouts per invocation
 * (use-cases/payouts.ts `reconcilePayouts`, which drives payouts with the worker's own code),
 * then the StuckPayouts gauge that lib/monitoring.ts alarms on, and the hot wallet's SOL
 * (HotWalletLamports: it pays every USDC payout's fee, with x402 on or off); then, given the x402 facilitator,
 * x402 settlements whose settle died (`reconcileX402`) and the second check of credited ones at
 * `finalized` (`checkX402Finality`). x402 not configured yet (no treasury or fee payer) skips them.
 * Last, the x402 purchases the service paid (`reconcilePurchases`), and the X402PurchasesUnsearched
 * gauge: those it could not search far enough back for to release or capture.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { X402UnavailableError } from '../core/x402';
import { logger } from '../observability/logger';
import { HOT_WALLET_LAMPORTS_METRIC, STUCK_PAYOUTS_METRIC, X402_PURCHASES_UNSEARCHED_METRIC } from '../observability/metric-names';
import { flushMetrics, metrics } from '../observability/metrics';
import { serializeError } from '../observability/serialize-error';
import { type PayoutDeps, type ReconcileReport, reconcilePayouts } from '../use-cases/payouts';
import { type PurchaseReconcileReport, reconcilePurchases } from '../use-cases/purchases';
import { checkX402Finality, reconcileX402, type X402FinalityReport, type X402ReconcileReport } from '../use-cases/x402';
import type { Facilitator } from '../x402/facilitator';
import type { PurchaseChain } from '../x402/purchase-signer';

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
  return async (_event, context) => {
    const remaining = context?.getRemainingTimeInMillis?.();
    const report = await reconcilePayouts({
      ...deps,
      ...(remaining !== undefined ? { startBefore: Date.now() + remaining - ONE_PAYOUT_MS } : {}),
    });
    metrics().addMetric(STUCK_PAYOUTS_METRIC, MetricUnit.Count, report.stuck);
    if (deps.hotWalletLamports) await reportHotWallet(deps.hotWalletLamports);
    let x402: ReconcilerReport['x402'];
    let purchases: PurchaseReconcileReport | undefined;
    try {
      x402 = deps.x402Facilitator ? await x402Sweep(deps.x402Facilitator, deps.clock?.() ?? new Date()) : undefined;
      purchases = deps.purchaseChain ? await purchaseSweep(deps.purchaseChain) : undefined;
      // On every purchase sweep, 0 included, so the alarm clears once none is left.
      if (purchases) metrics().addMetric(X402_PURCHASES_UNSEARCHED_METRIC, MetricUnit.Count, purchases.unsearched);
    } finally {
      // With the x402 sweep's: the hot wallet's SOL and the fees of the settlements it ended.
      flushMetrics();
    }
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

async function purchaseSweep(chain: () => Promise<PurchaseChain>): Promise<PurchaseReconcileReport | undefined> {
  try {
    return await reconcilePurchases(await chain());
  } catch (error) {
    if (error instanceof X402UnavailableError) return undefined;
    throw error;
  }
}

async function x402Sweep(facilitator: () => Promise<Facilitator>, now: Date): Promise<ReconcilerReport['x402']> {
  let chain: Facilitator;
  try {
    chain = await facilitator();
  } catch (error) {
    if (error instanceof X402UnavailableError) return undefined;
    throw error;
  }
  const report = await reconcileX402(chain, now);
  return { ...report, finality: await checkX402Finality(chain, now) };
}
