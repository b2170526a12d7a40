/**
 * How a PENDING top-up ends (docs/topups.md). Completing it is ONE TransactWriteItems
 * (`completeTopup`): the top-up PENDING → COMPLETED, the credit-once guard for the signature /
 * capture id, the user's balance (paying a debt first), the credit record the ledger audit counts
 * as money in, and the payer's open-top-up slot given back. Expiring or failing it ends it with
 * nothing credited, the slot given back in the same transaction.
 */
import { config } from '../../config';
import { BalanceLimitError, ServiceBusyError } from '../../core/errors';
import type { OutboxEvent } from '../../core/events';
import { newRecordId } from '../../core/ids';
import { MAX_BALANCE_MINOR, type Minor } from '../../core/money';
import {
  PaymentAlreadyCreditedError,
  type Topup,
  type TopupFailureReason,
  TopupNotPendingError,
  type TopupPayment,
} from '../../core/topups';
import { withOutbox } from '../events/outbox';
import { readMinor } from '../numbers';
import { statementPut, topupEntry } from '../statement/statement-items';
import { keys } from '../table';
import { named, type OldItem, outcome, type TransactEntry, type TransactItem, transactWrite } from '../transact';
import { chainCreditGuard } from './chain-credit';
import { owedAttribute } from './owed';

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

/** The debt the payer's item showed when the credit's condition on it failed: retry with it. */
interface DebtMoved {
  owedNow: Minor;
}

/**
 * The items that credit a top-up's payment, in ONE transaction: the top-up PENDING → COMPLETED,
 * the guard item for the signature / capture id (and for a signature the cross-rail one), the user's balance, the credit record (the
 * audit's money in), and the payer's open-top-up slot given back. Kept in one function so another
 * item (an outbox event) is one line.
 *
 * `owed` is what the payer owes in the payment's currency as last read (store/topups/owed.ts): the credit
 * pays it first — `min(amount, owed)` goes to the debt, the rest to the balance — and the user's
 * update is conditioned on the debt still being exactly that (0: none), so a debt that appeared
 * or changed meanwhile fails it and the caller retries with the item's figure (`DebtMoved`).
 * A Solana payment also writes the cross-rail guard (store/topups/chain-credit.ts). When several fail: the
 * transaction credited by an x402 settlement (TransferCreditedElsewhereError) speaks first, then a
 * credit already made (PaymentAlreadyCreditedError), then a top-up no longer PENDING
 * (TopupNotPendingError), then the user's item.
 */
function completionItems(topup: Topup, payment: TopupPayment, now: Date, owed: Minor): TransactEntry<DebtMoved>[] {
  const table = config().TABLE_NAME;
  const at = now.toISOString();
  const repaid = Math.min(payment.amount, owed);
  return [
    topupCompleted(topup, payment, at),
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
    // A Solana transfer is credited once across every rail: an x402 settlement of the same
    // transaction refuses this credit (TransferCreditedElsewhereError), and this one refuses it.
    ...(payment.rail === 'SOL'
      ? [
          chainCreditGuard<DebtMoved>(
            { signature: payment.externalId, rail: 'topup', amount: payment.amount, userId: topup.userId, topupId: topup.id },
            at,
          ),
        ]
      : []),
    payerCredited(topup, payment, owed),
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
    // The payer's statement entry of what reached the balance (docs/statement.md).
    statementPut(topupEntry(topup, payment, payment.amount - repaid, now)),
  ];
}

/** The top-up PENDING → COMPLETED, with what paid it. */
function topupCompleted(topup: Topup, payment: TopupPayment, at: string): TransactEntry<DebtMoved> {
  const table = config().TABLE_NAME;
  return named(
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
  );
}

/** The payer's item credited: what the payer owed paid first, the rest to the balance, under the debt as read. */
function payerCredited(topup: Topup, payment: TopupPayment, owed: Minor): TransactEntry<DebtMoved> {
  const table = config().TABLE_NAME;
  const repaid = Math.min(payment.amount, owed);
  const toBalance = payment.amount - repaid;
  const owedAttr = owedAttribute(payment.currency);
  return named(
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
  );
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
 * before (a replay: nothing to do), TransferCreditedElsewhereError when an x402 settlement credited
 * the same transaction, TopupNotPendingError when the top-up moved on,
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
