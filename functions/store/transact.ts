/**
 * TransactWriteItems, with what each item's failed condition means attached to the item itself;
 * and `conditionalWrite`, the same for a single-item write (PutItem, UpdateItem, DeleteItem: one
 * request, the same IAM action as before, no transaction's double cost).
 *
 * A repository builds each item with `named(item, { onConditionFailed })`: the domain error (or,
 * for a refusal the caller answers with a value, an `outcome`) that a failure of that item's
 * condition stands for, given the item as it was when the request asks for it
 * (ReturnValuesOnConditionCheckFailure: ALL_OLD). `transactWrite` tells apart:
 * - a condition failed → the meaning of the failed item with the highest `precedence` (a
 *   replay first, then the kill switch, then the repository's own order). Nothing depends on
 *   where an item sits in the transaction: adding or moving an item never changes what another
 *   one's failure means. A meaning may return undefined ("nothing more to say"): the next failed
 *   item speaks. An item without a meaning (a condition that only a bug can fail, such as a
 *   fresh random id already taken) comes out as `ConditionFailedError`;
 * - TransactionConflict / throttling inside the transaction → retried with full-jitter backoff,
 *   then the domain's `ConcurrencyError` (DynamoDB Local serialises transactions and never produces these,
 *   so tests inject them at the client, see test/store/transact.int.test.ts);
 * - throttling the SDK's own retries could not absorb → `ServiceBusyError` (503, Retry-After);
 * - no answer past the SDK's retries (a timeout, a broken connection) → `ServiceBusyError` at once,
 *   not retried here: the transaction may have committed, and only the caller's retry with the
 *   same idempotency key can tell (a replay answers the first outcome). The SDK's own retries of
 *   a timeout carry the same ClientRequestToken, which DynamoDB deduplicates.
 */
import { type CancellationReason, ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DeleteCommandInput,
  PutCommand,
  type PutCommandInput,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { type NativeAttributeValue, unmarshall } from '@aws-sdk/util-dynamodb';
import { config } from '../config';
import { backoffMs, sleep } from '../core/backoff';
import { ConcurrencyError, ServiceBusyError } from '../core/errors';
import { db, isThrottling, isUnanswered } from './client';

/** One item of a TransactWriteItems request, as the document client takes it. */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** An item as it was when its condition failed (when its request asked for it). */
export type OldItem = Record<string, NativeAttributeValue>;

/** A refusal the caller answers with a value instead of an error (`false`, a fresher figure to retry with). */
export interface Outcome<T> {
  readonly outcome: T;
}

export const outcome = <T>(value: T): Outcome<T> => ({ outcome: value });

/**
 * What a failed condition on an item stands for: an error to throw, an outcome to return, or
 * undefined when this failure alone says nothing more (the next failed item speaks).
 */
export type ConditionMeaning<T = never> = (old: OldItem | undefined) => Error | Outcome<T> | undefined;

/** Which meaning speaks when several conditions of one transaction failed: the highest. */
export const PRECEDENCE = {
  /**
   * The key a creation is made with no longer stands (a rotated account key, a disabled agent or a
   * rotated agent key), where the stored answer holds a secret (a grant key, a webhook signing
   * secret): refused before a replay could hand the secret to a credential that is no longer good.
   */
  credential: 110,
  /** The idempotency record is there: the first request's answer is the answer, whatever else failed. */
  replay: 100,
  /** The agent's kill switch: a disabled agent (or a rotated key) is told so before any other refusal. */
  killSwitch: 90,
  /** A repository's own items rank between this and the kill switch; shared builders (shard credit, debit) take it. */
  base: 0,
} as const;

/** A transaction item with the meaning of its condition. */
export interface NamedItem<T = never> {
  readonly item: TransactItem;
  readonly onConditionFailed: ConditionMeaning<T>;
  /**
   * PRECEDENCE.base unless given. Ties: the item written earlier speaks. A function of the old item
   * when one condition has two meanings of different rank (a balance shard's kill switch and cap).
   */
  readonly precedence?: Precedence;
}

/** A fixed rank, or one read from the item as it was when its condition failed. */
export type Precedence = number | ((old: OldItem | undefined) => number);

/** An item of `transactWrite`: named, or plain (no condition, or one that only a bug can fail). */
export type TransactEntry<T = never> = TransactItem | NamedItem<T>;

export function named<T = never>(
  item: TransactItem,
  meaning: { onConditionFailed: ConditionMeaning<T>; precedence?: Precedence },
): NamedItem<T> {
  return { item, ...meaning };
}

const isNamed = <T>(entry: TransactEntry<T>): entry is NamedItem<T> => 'item' in entry && 'onConditionFailed' in entry;
const requestOf = <T>(entry: TransactEntry<T>): TransactItem => (isNamed(entry) ? entry.item : entry);

/** What `transactWrite` did: committed, or refused with the outcome a failed item stands for. */
export type TransactResult<T> = { readonly committed: true } | { readonly committed: false; readonly outcome: T };

/**
 * A condition failed on items that carry no meaning (or whose meanings had nothing to say): never
 * expected, so a 500 with this logged. Names the failed items by operation and key family only.
 */
export class ConditionFailedError extends Error {
  constructor(readonly items: readonly string[]) {
    super(`transaction condition failed on ${items.join(', ')}`);
    this.name = 'ConditionFailedError';
  }
}

const RETRYABLE_REASONS = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

/**
 * Writes `entries` as one transaction. Resolves `{ committed: true }`, or `{ committed: false,
 * outcome }` when the failed item that speaks stands for an outcome; throws the error it stands for
 * otherwise (see the file header for conflicts and throttling).
 */
export async function transactWrite<T = never>(entries: readonly TransactEntry<T>[]): Promise<TransactResult<T>> {
  const items = entries.map(requestOf);
  const attempts = config().TRANSACTION_MAX_ATTEMPTS;
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (attempt > 0) await sleep(backoffMs(attempt));
    try {
      await db().send(new TransactWriteCommand({ TransactItems: items }));
      return { committed: true };
    } catch (error) {
      lastError = error;
      if (error instanceof TransactionCanceledException) {
        const reasons = error.CancellationReasons ?? [];
        const refusal = refusalOf(entries, reasons);
        if (refusal instanceof Error) throw refusal;
        if (refusal) return { committed: false, outcome: refusal.outcome };
        if (reasons.some((r) => r.Code !== undefined && RETRYABLE_REASONS.has(r.Code))) continue;
        throw error;
      }
      if (isThrottling(error)) continue;
      if (isUnanswered(error)) throw new ServiceBusyError(error);
      throw error;
    }
  }
  if (isThrottling(lastError)) throw new ServiceBusyError(lastError);
  throw new ConcurrencyError({ cause: lastError });
}

/** What a cancellation means when conditions failed (undefined when none did). */
function refusalOf<T>(entries: readonly TransactEntry<T>[], reasons: readonly CancellationReason[]): Error | Outcome<T> | undefined {
  // DynamoDB reports one reason per item, in the request's order: pair them up, then forget the order.
  const failed = entries
    .map((entry, i) => ({ entry, reason: reasons[i] }))
    .filter(({ reason }) => reason?.Code === 'ConditionalCheckFailed');
  if (failed.length === 0) return undefined;
  const speaking = failed
    .flatMap(({ entry, reason }) => {
      if (!isNamed(entry)) return [];
      const old = reason?.Item ? unmarshall(reason.Item) : undefined;
      const { precedence = PRECEDENCE.base } = entry;
      return [{ entry, old, rank: typeof precedence === 'number' ? precedence : precedence(old) }];
    })
    .sort((a, b) => b.rank - a.rank);
  for (const { entry, old } of speaking) {
    const meaning = entry.onConditionFailed(old);
    if (meaning !== undefined) return meaning;
  }
  return new ConditionFailedError(failed.map(({ entry }) => describe(requestOf(entry))));
}

/** `Put CHARGES#`: the operation and the key family, never a whole key (keys hold ids and hashes). */
function describe(item: TransactItem): string {
  const [operation, request] = Object.entries(item).find(([, value]) => value !== undefined) ?? ['?', undefined];
  const key = (request as { Key?: Record<string, unknown>; Item?: Record<string, unknown> } | undefined) ?? {};
  const pk = String((key.Key ?? key.Item)?.PK ?? '');
  return `${operation} ${pk.includes('#') ? pk.slice(0, pk.indexOf('#') + 1) : pk}`;
}

/** One single-item write, named as a transaction item names it (`{ Update: … }`), with its ReturnValues if wanted. */
export type SingleWrite =
  | { readonly Put: PutCommandInput }
  | { readonly Update: UpdateCommandInput }
  | { readonly Delete: DeleteCommandInput };

/** What `conditionalWrite` did: committed (with the attributes ReturnValues asked for), or refused with an outcome. */
export type WriteResult<T> =
  | { readonly committed: true; readonly attributes?: Record<string, NativeAttributeValue> }
  | { readonly committed: false; readonly outcome: T };

/**
 * Sends one conditional write. A failed condition comes out as `onConditionFailed` says, given the
 * item as it was when the request asks for it (ReturnValuesOnConditionCheckFailure: ALL_OLD): an
 * error thrown, an outcome returned, or (undefined) `ConditionFailedError`. Anything else the
 * client throws is thrown unchanged (the SDK has retried throttling already; a single write is
 * not retried here, as it was not by hand).
 */
export async function conditionalWrite<T = never>(write: SingleWrite, onConditionFailed: ConditionMeaning<T>): Promise<WriteResult<T>> {
  try {
    const { Attributes } = await send(write);
    return Attributes ? { committed: true, attributes: Attributes } : { committed: true };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const meaning = onConditionFailed(error.Item ? unmarshall(error.Item) : undefined);
    if (meaning instanceof Error) throw meaning;
    if (meaning) return { committed: false, outcome: meaning.outcome };
    throw new ConditionFailedError([describe(write as TransactItem)]);
  }
}

function send(write: SingleWrite): Promise<{ Attributes?: Record<string, NativeAttributeValue> }> {
  if ('Put' in write) return db().send(new PutCommand(write.Put));
  if ('Update' in write) return db().send(new UpdateCommand(write.Update));
  return db().send(new DeleteCommand(write.Delete));
}
