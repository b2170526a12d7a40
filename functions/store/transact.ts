/**
 * TransactWriteItems with the failure modes a money movement must tell apart:
 * - a condition failed on a known item → `ConditionFailedError` naming which (and the old item
 *   when ReturnValuesOnConditionCheckFailure asked for it);
 * - TransactionConflict / throttling inside the transaction → retried with full-jitter backoff,
 *   then `ConcurrencyError` (DynamoDB Local serialises transactions and never produces these,
 *   so tests inject them at the client, see test/store/transact.int.test.ts);
 * - throttling the SDK's own retries could not absorb → `ServiceBusyError` (503, Retry-After).
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { type NativeAttributeValue, unmarshall } from '@aws-sdk/util-dynamodb';
import { config } from '../config';
import { ServiceBusyError } from '../core/errors';
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

export class ConcurrencyError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('transaction kept conflicting with concurrent writes', options);
    this.name = 'ConcurrencyError';
  }
}

const RETRYABLE_REASONS = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);
const THROTTLING = new Set(['ThrottlingException', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Full jitter: a random wait up to min(cap, base·2^attempt). */
export function backoffMs(attempt: number, baseMs = 15, capMs = 400): number {
  return Math.random() * Math.min(capMs, baseMs * 2 ** attempt);
}

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
  return error instanceof Error && THROTTLING.has(error.name);
}
