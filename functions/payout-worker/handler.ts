import { railFor } from '../rails';
import { createPayoutWorker } from './worker';

/** SQS → payout worker (event source mapping with `reportBatchItemFailures`). */
export const handler = createPayoutWorker({ railFor });
