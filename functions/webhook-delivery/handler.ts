import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { loadConfig, NEEDS_APPROVAL_SECRET, NEEDS_WEBHOOK_QUEUE, NEEDS_WEBHOOK_SECRETS } from '../config';
import { withRequestContext } from '../observability/lambda-handler';
import { deliverBatch } from '../webhooks/delivery';

// The approval secret: charge.approval_requested's link is derived at delivery, never stored.
loadConfig({ require: [...NEEDS_WEBHOOK_QUEUE, ...NEEDS_WEBHOOK_SECRETS, ...NEEDS_APPROVAL_SECRET] });

/** SQS → signed POSTs to the receivers (event source mapping with `reportBatchItemFailures`). */
export const handler = withRequestContext(async (event: SQSEvent): Promise<SQSBatchResponse> => deliverBatch(event.Records));
