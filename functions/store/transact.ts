/**
 * TransactWriteItems with the failure modes a money movement must tell apart:
 * - a condition failed on a known item → `ConditionFailedError` naming which (and the old item
 *   when ReturnValuesOnConditionCheckFailure asked for it);
 * - TransactionConflict / throttling inside the transaction → retried with full-jitter backoff,
 *   then the domain's `ConcurrencyError` (DynamoDB Local serialises transactions and never produces these,
 *   so tests inject them at the client, see test/store/transact.int.test.ts);
 * - throttling the SDK's own retries could not absorb → `ServiceBusyError` (503, Retry-After).
 */
import {
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ThrottlingException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { type NativeAttributeValue, unmarshall } from '@aws-sdk/util-dynamodb';
import { config } from '../config';
import { backoffMs, sleep } from '../core/backoff';
import { ConcurrencyError, ServiceBusyError } from '../core/errors';
import { db } from './client';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export class ConditionFailedError extends Error {
  constructor(
    /** Indexes of the items whose condition failed. */
    readonly failed: readonly number[],
    /** The old items of those that returned one, by index. */
    readonly oldItems: ReadonlyMap<number, Record<string, NativeAttributeValue>>,
  ) {
    super(`transaction condition failed on item(s) ${failed.join(',')}`);
    this.name = 'ConditionFailedError';
  }
}

const RETRYABLE_REASONS = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

export async function transactWrite(items: TransactItem[]): Promise<void> {
  const attempts = config().TRANSACTION_MAX_ATTEMPTS;
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await sleep(backoffMs(attempt));
    try {
      await db().send(new TransactWriteCommand({ TransactItems: items }));
      return;
    } catch (error) {
      lastError = error;
      if (error instanceof TransactionCanceledException) {
        const reasons = error.CancellationReasons ?? [];
        const failed: number[] = [];
        const oldItems = new Map<number, Record<string, NativeAttributeValue>>();
        reasons.forEach((reason, index) => {
          if (reason.Code === 'ConditionalCheckFailed') {
            failed.push(index);
            if (reason.Item) oldItems.set(index, unmarshall(reason.Item));
          }
        });
        if (failed.length > 0) throw new ConditionFailedError(failed, oldItems);
        if (reasons.some((r) => r.Code !== undefined && RETRYABLE_REASONS.has(r.Code))) continue;
        throw error;
      }
      if (isThrottling(error)) continue;
      throw error;
    }
  }
  if (isThrottling(lastError)) throw new ServiceBusyError(lastError);
  throw new ConcurrencyError({ cause: lastError });
}

export function isThrottling(error: unknown): boolean {
  return (
    error instanceof ThrottlingException || error instanceof ProvisionedThroughputExceededException || error instanceof RequestLimitExceeded
  );
}
