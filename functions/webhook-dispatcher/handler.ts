import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { loadConfig, NEEDS_RECEIPTS, NEEDS_WEBHOOK_QUEUE } from '../config';
import { withRequestContext } from '../observability/lambda-handler';
import { type ChangeRecord, dispatchRecords } from '../webhooks/dispatcher';

loadConfig({ require: [...NEEDS_WEBHOOK_QUEUE, ...NEEDS_RECEIPTS] });

/**
 * DynamoDB Streams (filtered to new outbox items, new charge items and agent items) → one delivery message per
 * subscribed endpoint. A failure is reported at its record, so the stream retries from there.
 */
export const handler = withRequestContext(async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const failed = await dispatchRecords(event.Records as ChangeRecord[]);
  return { batchItemFailures: failed === undefined ? [] : [{ itemIdentifier: failed }] };
});
