import { loadConfig, NEEDS_PAYOUT_QUEUE, NEEDS_RAILS } from '../config';
import { withRequestContext } from '../observability/lambda-handler';
import { hotWalletLamports, railFor } from '../rails';
import { readOnlyFacilitator } from '../x402/facilitator';
import { purchaseChain } from '../x402/purchase-chain';
import { createReconciler } from './reconciler';

// Refuses to start (fails the init) without the rails' settings or the queue it re-sends payouts to.
loadConfig({ require: [...NEEDS_RAILS, ...NEEDS_PAYOUT_QUEUE] });

/**
 * Scheduled (EventBridge) sweep: re-sends stale PENDING payouts, drives stale PROCESSING ones;
 * finishes x402 settlements whose settle died and checks credited ones again at `finalized`.
 */
export const handler = withRequestContext(
  createReconciler({ railFor, x402Facilitator: readOnlyFacilitator, purchaseChain, hotWalletLamports }),
);
