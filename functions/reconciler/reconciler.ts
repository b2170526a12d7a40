/**
 * The reconciler as a scheduled function: one sweep of stale in-flight payouts per invocation
 * (use-cases/payouts.ts `reconcilePayouts`, which drives payouts with the worker's own code).
 */
import { type PayoutDeps, type ReconcileReport, reconcilePayouts } from '../use-cases/payouts';

export type Reconciler = () => Promise<ReconcileReport>;

export function createReconciler(deps: PayoutDeps): Reconciler {
  return () => reconcilePayouts(deps);
}
