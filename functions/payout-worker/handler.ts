import { loadConfig, NEEDS_RAILS } from '../config';
import { withRequestContext } from '../observability/lambda-handler';
import { railFor } from '../rails';
import { createPayoutWorker } from './worker';

// Refuses to start (fails the init) without a rail's settings, rather than failing every payout.
loadConfig({ require: NEEDS_RAILS });

/** SQS → payout worker (event source mapping with `reportBatchItemFailures`). */
export const handler = withRequestContext(createPayoutWorker({ railFor }));
