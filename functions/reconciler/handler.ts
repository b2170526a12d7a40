import { railFor } from '../rails';
import { createReconciler } from './reconciler';

/** Scheduled (EventBridge) sweep: re-sends stale PENDING payouts, drives stale PROCESSING ones. */
export const handler = createReconciler({ railFor });
