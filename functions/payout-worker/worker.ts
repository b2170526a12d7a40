/**
 * The payout worker as an SQS batch consumer (Lambda event source mapping with
 * `reportBatchItemFailures`). Each record names one payout; each is driven independently and a
 * record fails alone, so SQS redelivers only what did not finish: a message is deleted only once
 * its payout is final, or waiting on the network (the reconciler re-checks those). After
 * PAYOUT_MAX_RECEIVES receives SQS moves a failing message to the dead-letter queue; the payout
 * itself stays PENDING or PROCESSING, visible to the agent, and the reconciler finishes it.
 */
import type { SQSBatchItemFailure, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { config } from '../config';
import { logger } from '../observability/logger';
import { serializeError } from '../observability/serialize-error';
import { parsePayoutMessage } from '../queue/payout-queue';
import { drivePayout, type PayoutDeps } from '../use-cases/payouts/payouts';

export type PayoutWorker = (event: SQSEvent) => Promise<SQSBatchResponse>;

export function createPayoutWorker(deps: PayoutDeps): PayoutWorker {
  return async (event) => {
    const failures = await Promise.all(event.Records.map((record) => handleRecord(record, deps)));
    return { batchItemFailures: failures.filter((f): f is SQSBatchItemFailure => f !== undefined) };
  };
}

async function handleRecord(record: SQSRecord, deps: PayoutDeps): Promise<SQSBatchItemFailure | undefined> {
  const receives = Number(record.attributes?.ApproximateReceiveCount ?? '1');
  const lastTry = receives >= config().PAYOUT_MAX_RECEIVES;
  const failure = { itemIdentifier: record.messageId };
  const message = parsePayoutMessage(record.body);
  if (!message) {
    // Never valid, never will be: let it reach the dead-letter queue where an operator sees it.
    logger().error('payout message is not {payoutId, agentId}', { messageId: record.messageId, receives });
    return failure;
  }
  try {
    const result = await drivePayout(message, deps);
    if (result === 'missing') {
      logger().error('payout message names no payout', { ...message, messageId: record.messageId, receives });
      return failure;
    }
    if (result === 'busy') {
      // Another attempt is driving it (a duplicate message, or the reconciler). Keep the message:
      // it comes back after the visibility timeout and is then acknowledged as final, or, if
      // that attempt died, finds its lease run out and finishes the payout itself.
      logger().info('payout busy with another attempt; message kept for later', { ...message, receives });
      return failure;
    }
    return undefined;
  } catch (error) {
    const details = { ...message, messageId: record.messageId, receives, error: serializeError(error) };
    if (lastTry) logger().error('payout attempt failed; message goes to the DLQ, the reconciler takes over', details);
    else logger().warn('payout attempt failed; SQS will retry', details);
    return failure;
  }
}
