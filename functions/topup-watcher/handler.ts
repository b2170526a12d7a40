import { loadConfig, NEEDS_TOPUP_WATCHER } from '../config';
import { withRequestContext } from '../observability/lambda-handler';
import { createWatcher } from '../use-cases/topups/topup-watch';

// Refuses to start (fails the init) without the deposit wallet, the RPC URL and PayPal's settings.
loadConfig({ require: NEEDS_TOPUP_WATCHER });

/** Scheduled (EventBridge) run: credits finalized USDC payments, polls PayPal orders, records unmatched payments. */
export const handler = withRequestContext(createWatcher());
