/**
 * Top-ups in DynamoDB (docs/topups.md). A top-up lives in its user's partition (`TOPUPS#<userId>`,
 * so another user's is simply not there), carries a GSI1 entry only while PENDING (the watcher's
 * work list, sorted by expiry), and has a lookup item from its Solana Pay reference or PayPal order
 * id. Completing it is ONE TransactWriteItems (`completeTopup`): the top-up PENDING → COMPLETED,
 * the credit-once guard for the signature / capture id, the user's balance, and the credit record
 * the ledger audit counts as money in.
 */

import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { BalanceLimitError, ServiceBusyError } from '../core/errors';
import type { OutboxEvent } from '../core/events';
import { newRecordId } from '../core/ids';
import { type Currency, MAX_BALANCE_MINOR, type Minor } from '../core/money';
import {
  MAX_OPEN_TOPUPS,
  PaymentAlreadyCreditedError,
  type Topup,
  type TopupFailureReason,
  TopupLimitError,
  TopupNotPendingError,
  type TopupPayment,
  type TopupStatus,
  type UnmatchedPayment,
  type UsdcTopup,
} from '../core/topups';
import { db } from './client';
import { readMinor } from './numbers';
import { withOutbox } from './outbox';
import { owedAttribute } from './owed';
import { GSI1, INDEX_PARTITIONS, keys } from './table';
import { named, type OldItem, outcome, type TransactEntry, type TransactItem, transactWrite } from './transact';

/**
 * Writes a new PENDING top-up with its lookup item (reference or order id) and takes one of the
 * payer's open-top-up slots, in one transaction: TopupLimitError when MAX_OPEN_TOPUPS are open,
 * however many requests race.
 */
export async function createTopup(topup: Topup): Promise<void> {
  const table = config().TABLE_NAME;
  const lookup = topup.currency === 'USDC' ? keys.topupReference(topup.reference) : keys.topupOrder(topup.orderId);
  const items: TransactEntry[] = [
    {
      Put: {
        TableName: table,
        Item: {
          ...keys.topup(topup.userId, topup.id),
          ...keys.pendingTopupIndex(topup.expiresAt, topup.id),
          type: 'Topup',
          ...clean(topup),
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    {
      Put: {
        TableName: table,
        Item: { ...lookup, type: 'TopupLookup', userId: topup.userId, topupId: topup.id },
        // A reference is 32 random bytes and an order id PayPal's own: a clash means a bug, not a retry.
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
  ];
  if (topup.holdsOpenSlot) {
    items.push(
      named(
        {
          Update: {
            TableName: table,
            Key: keys.openTopups(topup.userId),
            UpdateExpression: 'SET #open = if_not_exists(#open, :zero) + :one, #type = :type',
            // The cap, on the item every create and every end of this payer's top-ups goes through.
            ConditionExpression: 'attribute_not_exists(#open) OR #open < :max',
            ExpressionAttributeNames: { '#open': 'open', '#type': 'type' },
            ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':max': MAX_OPEN_TOPUPS, ':type': 'OpenTopups' },
          },
        },
        { onConditionFailed: () => new TopupLimitError() },
      ),
    );
  }
  await transactWrite(items);
}

/** How many PENDING top-ups the payer has open (their slots taken). */
export async function openTopupCount(userId: string): Promise<number> {
  const out = await db().send(
    new GetCommand({
      TableName: config().TABLE_NAME,
      Key: keys.openTopups(userId),
      ConsistentRead: true,
      ProjectionExpression: '#open',
      ExpressionAttributeNames: { '#open': 'open' },
    }),
  );
  return typeof out.Item?.open === 'number' ? out.Item.open : 0;
}

/**
 * Gives the payer's open-top-up slot back, in the transaction that ends a PENDING top-up (its
 * condition on PENDING is what makes this happen once). Top-ups opened before the cap hold none.
 */
function releaseOpenSlot(topup: Topup): TransactItem[] {
  if (!topup.holdsOpenSlot) return [];
  return [
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.openTopups(topup.userId),
        UpdateExpression: 'SET #open = #open - :one',
        // No condition of its own: ending the top-up must never fail on the counter.
        ExpressionAttributeNames: { '#open': 'open' },
        ExpressionAttributeValues: { ':one': 1 },
      },
    },
  ];
}

export async function getTopup(userId: string, topupId: string): Promise<Topup | undefined> {
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.topup(userId, topupId), ConsistentRead: true }));
  return out.Item ? toTopup(out.Item) : undefined;
}

/** A user's top-ups, newest first; `after` is the last id of the previous page. */
export async function listTopups(userId: string, limit: number, after?: string): Promise<{ topups: Topup[]; more: boolean }> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      KeyConditionExpression: after ? 'PK = :pk AND SK < :after' : 'PK = :pk',
      ExpressionAttributeValues: { ':pk': keys.topupPartition(userId), ...(after ? { ':after': after } : {}) },
      ScanIndexForward: false,
      Limit: limit + 1,
    }),
  );
  const items = out.Items ?? [];
  return { topups: items.slice(0, limit).map(toTopup), more: items.length > limit };
}

/** The top-up a reference key or order id belongs to (any status); undefined when none. */
export async function findTopupBy(lookup: { reference: string } | { orderId: string }): Promise<Topup | undefined> {
  const key = 'reference' in lookup ? keys.topupReference(lookup.reference) : keys.topupOrder(lookup.orderId);
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: key, ConsistentRead: true }));
  if (!out.Item) return undefined;
  return getTopup(String(out.Item.userId), String(out.Item.topupId));
}

/**
 * PENDING top-ups, soonest expiry first, at most `limit` (the watcher's work list). From the
 * sparse GSI1 entry, so the cost grows with the pending top-ups, never with history.
 */
export async function listPendingTopups(limit: number): Promise<Topup[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      IndexName: GSI1.indexName,
      KeyConditionExpression: 'GSI1PK = :pk',
      ExpressionAttributeValues: { ':pk': keys.pendingTopupPartition() },
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map(toTopup).filter((t) => t.status === 'PENDING');
}

/** The debt the payer's item showed when the credit's condition on it failed: retry with it. */
interface DebtMoved {
  owedNow: Minor;
}

/**
 * The items that credit a top-up's payment, in ONE transaction: the top-up PENDING → COMPLETED,
 * the guard item for the signature / capture id, the user's balance, the credit record (the
 * audit's money in), and the payer's open-top-up slot given back. Kept in one function so another
 * item (an outbox event) is one line.
 *
 * `owed` is what the payer owes in the payment's currency as last read (store/owed.ts): the credit
 * pays it first — `min(amount, owed)` goes to the debt, the rest to the balance — and the user's
 * update is conditioned on the debt still being exactly that (0: none), so a debt that appeared
 * or changed meanwhile fails it and the caller retries with the item's figure (`DebtMoved`).
 * When several fail: a credit already made (PaymentAlreadyCreditedError) speaks first, then a
 * top-up no longer PENDING (TopupNotPendingError), then the user's item.
 */
function completionItems(topup: Topup, payment: TopupPayment, now: Date, owed: Minor): TransactEntry<DebtMoved>[] {
  const table = config().TABLE_NAME;
  const at = now.toISOString();
  const repaid = Math.min(payment.amount, owed);
  const toBalance = payment.amount - repaid;
  const owedAttr = owedAttribute(payment.currency);
  return [
    named(
      {
        Update: {
          TableName: table,
          Key: keys.topup(topup.userId, topup.id),
          UpdateExpression: 'SET #status = :completed, amount = :amount, externalId = :ext, completedAt = :at REMOVE GSI1PK, GSI1SK',
          // Only a PENDING top-up completes: a second payment, a late webhook or an expiry that won stays out.
          ConditionExpression: '#status = :pending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':completed': 'COMPLETED',
            ':pending': 'PENDING',
            ':amount': payment.amount,
            ':ext': payment.externalId,
            ':at': at,
          },
        },
      },
      { onConditionFailed: () => new TopupNotPendingError(topup.id), precedence: 1 },
    ),
    named(
      {
        Put: {
          TableName: table,
          Item: {
            ...keys.topupCredit(payment.rail, payment.externalId),
            type: 'TopupCredit',
            topupId: topup.id,
            userId: topup.userId,
            amount: payment.amount,
            currency: payment.currency,
            createdAt: at,
          },
          // Credit once per signature / capture id, whichever top-up or process tries.
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      { onConditionFailed: () => new PaymentAlreadyCreditedError(payment.externalId), precedence: 2 },
    ),
    named(
      {
        Update: {
          TableName: table,
          Key: keys.user(topup.userId),
          UpdateExpression: repaid > 0 ? 'ADD #cur :toBalance, #owed :repaid' : 'ADD #cur :toBalance',
          // The balance stays under MAX_BALANCE_MINOR after the credit, and the debt is what was read.
          ConditionExpression:
            'attribute_exists(PK) AND (attribute_not_exists(#cur) OR #cur <= :room) AND ' +
            (owed > 0 ? '#owed = :owed' : '(attribute_not_exists(#owed) OR #owed = :owed)'),
          ExpressionAttributeNames: { '#cur': payment.currency, '#owed': owedAttr },
          ExpressionAttributeValues: {
            ':toBalance': toBalance,
            ':room': MAX_BALANCE_MINOR - toBalance,
            ':owed': owed,
            ...(repaid > 0 ? { ':repaid': -repaid } : {}),
          },
          // Which figure failed (the debt moved, or the balance is full) is read from the item.
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      { onConditionFailed: (old) => debtMovedOrFull(old, owedAttr, owed) },
    ),
    {
      Put: {
        TableName: table,
        Item: {
          ...keys.credit(topup.userId, newRecordId()),
          type: 'Credit',
          source: 'topup',
          userId: topup.userId,
          topupId: topup.id,
          externalId: payment.externalId,
          amount: payment.amount,
          currency: payment.currency,
          // The part of this credit that paid a debt (ledger audit: money that left with a reversal).
          ...(repaid > 0 ? { owedRepaid: repaid } : {}),
          createdAt: at,
        },
      },
    },
    ...releaseOpenSlot(topup),
  ];
}

/** The user's item refused the credit: its debt is not the one assumed (retry with it), or the balance is full. */
function debtMovedOrFull(old: OldItem | undefined, owedAttr: string, assumed: Minor) {
  const owedNow = old ? readMinor(old, owedAttr) : 0;
  return old && owedNow !== assumed ? outcome<DebtMoved>({ owedNow }) : new BalanceLimitError();
}

/** A debt that keeps changing under the credit (reversals arriving at once) is retried this often. */
const OWED_ATTEMPTS = 5;

/**
 * Credits `payment` to `topup` and completes it, exactly once, paying what the payer owes in its
 * currency first. Throws PaymentAlreadyCreditedError when the signature / capture id was credited
 * before (a replay: nothing to do), TopupNotPendingError when the top-up moved on,
 * BalanceLimitError when the credit would pass MAX_BALANCE_MINOR. `events` (topup.completed) are
 * written in the same transaction, last. Without a debt this is one request, as before.
 */
export async function completeTopup(topup: Topup, payment: TopupPayment, now: Date, events: readonly OutboxEvent[] = []): Promise<void> {
  let owed = 0;
  for (let attempt = 1; ; attempt++) {
    const result = await transactWrite(withOutbox(completionItems(topup, payment, now, owed), events, now));
    if (result.committed) return;
    // The debt would not hold still (reversals landing one after another): retry later (503).
    if (attempt >= OWED_ATTEMPTS) throw new ServiceBusyError();
    // The debt was not what this attempt assumed: again, with the item's figure.
    owed = result.outcome.owedNow;
  }
}

/** PENDING → EXPIRED with nothing credited; false when it was no longer PENDING. */
export function expireTopup(topup: Topup, now: Date): Promise<boolean> {
  return endTopup(topup, { status: 'EXPIRED' }, now);
}

/**
 * PENDING → FAILED with nothing credited, `failureReason` and the capture it concerns (if any);
 * false when it was no longer PENDING.
 */
export function failTopup(topup: Topup, failure: { failureReason: TopupFailureReason; externalId?: string }, now: Date): Promise<boolean> {
  return endTopup(topup, { status: 'FAILED', ...failure }, now);
}

/** Ends a PENDING top-up without a credit, giving its open slot back in the same transaction. */
async function endTopup(
  topup: Topup,
  end: { status: 'EXPIRED' } | { status: 'FAILED'; failureReason: TopupFailureReason; externalId?: string },
  now: Date,
): Promise<boolean> {
  const failed = end.status === 'FAILED';
  const result = await transactWrite([
    named(
      {
        Update: {
          TableName: config().TABLE_NAME,
          Key: keys.topup(topup.userId, topup.id),
          UpdateExpression: `SET #status = :status, endedAt = :at${failed ? ', failureReason = :reason' : ''}${
            failed && end.externalId ? ', externalId = :ext' : ''
          } REMOVE GSI1PK, GSI1SK`,
          // Only a PENDING top-up ends: a credit, an expiry or a failure that won stays as it is.
          ConditionExpression: '#status = :pending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':status': end.status,
            ':pending': 'PENDING',
            ':at': now.toISOString(),
            ...(failed ? { ':reason': end.failureReason } : {}),
            ...(failed && end.externalId ? { ':ext': end.externalId } : {}),
          },
        },
      },
      { onConditionFailed: () => outcome('no longer PENDING') },
    ),
    ...releaseOpenSlot(topup),
  ]);
  return result.committed;
}

/**
 * Moves a PENDING USDC top-up's place in its reference's history (`scannedThrough`) from what
 * this run read to `to`; false when the top-up moved on or another run moved it first (harmless:
 * that run read the same history).
 */
export async function moveReferenceCursor(topup: UsdcTopup, to: string): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: config().TABLE_NAME,
        Key: keys.topup(topup.userId, topup.id),
        UpdateExpression: 'SET scannedThrough = :to',
        // Still PENDING (a completed or expired top-up is not watched), and from where this run started.
        ConditionExpression:
          topup.scannedThrough === undefined
            ? '#status = :pending AND attribute_not_exists(scannedThrough)'
            : '#status = :pending AND scannedThrough = :from',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':pending': 'PENDING',
          ':to': to,
          ...(topup.scannedThrough === undefined ? {} : { ':from': topup.scannedThrough }),
        },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/** Which of these signatures / capture ids were already credited (one BatchGet-free Get each; few per run). */
export async function creditedAlready(rail: 'SOL' | 'PAYPAL', externalId: string): Promise<boolean> {
  const out = await db().send(
    new GetCommand({
      TableName: config().TABLE_NAME,
      Key: keys.topupCredit(rail, externalId),
      ConsistentRead: true,
      ProjectionExpression: 'PK',
    }),
  );
  return out.Item !== undefined;
}

/** Records a payment that matched no top-up; true when this call recorded it (false: already known). */
export async function recordUnmatched(payment: UnmatchedPayment, now: Date): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: config().TABLE_NAME,
        Item: {
          ...keys.unmatchedPayment(payment.signature),
          ...keys.unmatchedIndex(payment.signature),
          type: 'UnmatchedPayment',
          ...clean(payment),
          createdAt: now.toISOString(),
        },
        // Seen again (another watcher, the next run): recorded and alarmed once.
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

export async function isUnmatchedRecorded(signature: string): Promise<boolean> {
  const out = await db().send(
    new GetCommand({
      TableName: config().TABLE_NAME,
      Key: keys.unmatchedPayment(signature),
      ConsistentRead: true,
      ProjectionExpression: 'PK',
    }),
  );
  return out.Item !== undefined;
}

/** Unmatched payments, for operators and tests. */
export async function listUnmatched(limit = 100): Promise<UnmatchedPayment[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      IndexName: GSI1.indexName,
      KeyConditionExpression: 'GSI1PK = :pk',
      ExpressionAttributeValues: { ':pk': INDEX_PARTITIONS.unmatched.key },
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((i) => ({
    signature: String(i.signature),
    reason: i.reason as UnmatchedPayment['reason'],
    amount: String(i.amount),
    mint: String(i.mint),
    topupId: i.topupId === undefined ? undefined : String(i.topupId),
    userId: i.userId === undefined ? undefined : String(i.userId),
    slot: Number(i.slot),
  }));
}

/** The last deposit-account signature the watcher processed; undefined before the first run. */
export async function readDepositCursor(account: string): Promise<string | undefined> {
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.depositCursor(account), ConsistentRead: true }));
  return out.Item ? String(out.Item.signature) : undefined;
}

/** Moves the cursor from `from` to `to`; false when another watcher moved it first (harmless). */
export async function moveDepositCursor(account: string, from: string | undefined, to: string, now: Date): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: config().TABLE_NAME,
        Item: { ...keys.depositCursor(account), type: 'DepositCursor', signature: to, updatedAt: now.toISOString() },
        ConditionExpression: from === undefined ? 'attribute_not_exists(PK)' : 'signature = :from',
        ...(from === undefined ? {} : { ExpressionAttributeValues: { ':from': from } }),
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

function toTopup(item: Record<string, unknown>): Topup {
  const str = (v: unknown) => (v === undefined || v === null ? undefined : String(v));
  const base = {
    id: String(item.id),
    userId: String(item.userId),
    status: item.status as TopupStatus,
    createdAt: String(item.createdAt),
    expiresAt: String(item.expiresAt),
    amount: typeof item.amount === 'number' ? item.amount : undefined,
    externalId: str(item.externalId),
    completedAt: str(item.completedAt),
    failureReason: str(item.failureReason) as TopupFailureReason | undefined,
    holdsOpenSlot: item.holdsOpenSlot === true,
  };
  if ((item.currency as Currency) === 'USD') {
    return { ...base, currency: 'USD', amount: Number(item.amount), orderId: String(item.orderId), approveUrl: String(item.approveUrl) };
  }
  return {
    ...base,
    currency: 'USDC',
    address: String(item.address),
    reference: String(item.reference),
    mint: String(item.mint),
    scannedThrough: str(item.scannedThrough),
  };
}

/** Drops undefined attributes (the document client refuses them). */
function clean<T extends object>(value: T): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}
