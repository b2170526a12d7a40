/**
 * Reversals of credited top-ups (docs/topups.md): PayPal took money back from a capture that was
 * credited (PAYMENT.CAPTURE.REVERSED: a chargeback; PAYMENT.CAPTURE.REFUNDED: a refund). ONE
 * TransactWriteItems per PayPal refund id, each item named with what its failure means:
 *   - the once-per-refund guard `TOPUPREVERSAL#PAYPAL#<refundId>` (`attribute_not_exists`): a
 *     duplicate delivery, a replay or two deliveries at once debit once;
 *   - the capture's credit-once guard gains `reversed`, conditioned to stay within what was
 *     credited (PayPal never refunds more than it captured; if it said so, nothing moves);
 *   - the user's item: `debited` (at most the balance, as read) leaves the balance and the
 *     shortfall is added to `owed<currency>`, conditioned on the balance being what was read;
 *   - the reversal record `REVERSALS#<userId>/<refundId>` the ledger audit counts as money out;
 *   - the payer's statement entry (`reversal`, −`debited`; docs/statement.md).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import type { Currency, Minor } from '../../core/money';
import { db } from '../client';
import { readMinor } from '../numbers';
import { reversalEntry, statementPut } from '../statement/statement-items';
import { keys } from '../table';
import { named, outcome, transactWrite } from '../transact';
import { owedAttribute } from './owed';

/** What the credit-once guard of a capture says was credited, and to whom. */
export interface CreditedPayment {
  topupId: string;
  userId: string;
  amount: Minor;
  currency: Currency;
  /** Already taken back by earlier reversals of this capture. */
  reversed: Minor;
}

/** The credit of a PayPal capture, if it was credited (the guard exists). */
export async function creditedPaypalCapture(captureId: string): Promise<CreditedPayment | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: config().TABLE_NAME, Key: keys.topupCredit('PAYPAL', captureId), ConsistentRead: true }),
  );
  const item = out.Item;
  if (!item) return undefined;
  return {
    topupId: String(item.topupId),
    userId: String(item.userId),
    amount: Number(item.amount),
    currency: item.currency as Currency,
    reversed: readMinor(item, 'reversed'),
  };
}

/** The user's balance in `currency` now (strongly consistent), what a reversal debits from. */
export async function balanceOf(userId: string, currency: Currency): Promise<Minor | undefined> {
  const out = await db().send(
    new GetCommand({
      TableName: config().TABLE_NAME,
      Key: keys.user(userId),
      ConsistentRead: true,
      ProjectionExpression: 'PK, #cur',
      ExpressionAttributeNames: { '#cur': currency },
    }),
  );
  return out.Item ? readMinor(out.Item, currency) : undefined;
}

export interface Reversal {
  refundId: string;
  captureId: string;
  eventType: string;
  credit: CreditedPayment;
  /** What PayPal took back, in minor units of the credit's currency. */
  amount: Minor;
  /** The balance as read: `min(balance, amount)` is debited, the rest owed. */
  balance: Minor;
}

/** What came of one reversal attempt. */
export type ReversalOutcome =
  | { kind: 'reversed'; debited: Minor; owed: Minor }
  | { kind: 'already-reversed' }
  | { kind: 'exceeds-credit' }
  | { kind: 'balance-moved' };

/**
 * Applies one reversal in one transaction (see the file header). Never throws for a refused
 * condition: when several fail, the guard says it first (already reversed), then the credit's cap.
 */
export async function reverseCredit(r: Reversal, now: Date): Promise<ReversalOutcome> {
  const table = config().TABLE_NAME;
  const at = now.toISOString();
  const debited = Math.min(Math.max(r.balance, 0), r.amount);
  const owed = r.amount - debited;
  const { credit } = r;
  type Refused = Exclude<ReversalOutcome, { kind: 'reversed' }>;
  const result = await transactWrite<Refused>([
    named(
      {
        Put: {
          TableName: table,
          Item: {
            ...keys.topupReversal('PAYPAL', r.refundId),
            type: 'TopupReversal',
            refundId: r.refundId,
            captureId: r.captureId,
            topupId: credit.topupId,
            userId: credit.userId,
            amount: r.amount,
            currency: credit.currency,
            createdAt: at,
          },
          // Once per PayPal refund id, whichever delivery or process gets here.
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      { onConditionFailed: () => outcome({ kind: 'already-reversed' }), precedence: 2 },
    ),
    named(
      {
        Update: {
          TableName: table,
          Key: keys.topupCredit('PAYPAL', r.captureId),
          UpdateExpression: 'SET reversed = if_not_exists(reversed, :zero) + :amount',
          // Never more taken back from a capture than it credited.
          ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(reversed) OR reversed <= :room)',
          ExpressionAttributeValues: { ':zero': 0, ':amount': r.amount, ':room': credit.amount - r.amount },
        },
      },
      { onConditionFailed: () => outcome({ kind: 'exceeds-credit' }), precedence: 1 },
    ),
    named(
      {
        Update: {
          TableName: table,
          Key: keys.user(credit.userId),
          UpdateExpression: 'ADD #cur :debit, #owed :owed',
          // The balance the split was computed from; a charge or credit meanwhile means computing it again.
          ConditionExpression: r.balance === 0 ? 'attribute_exists(PK) AND (attribute_not_exists(#cur) OR #cur = :bal)' : '#cur = :bal',
          ExpressionAttributeNames: { '#cur': credit.currency, '#owed': owedAttribute(credit.currency) },
          ExpressionAttributeValues: { ':debit': -debited, ':owed': owed, ':bal': r.balance },
        },
      },
      { onConditionFailed: () => outcome({ kind: 'balance-moved' }) },
    ),
    {
      Put: {
        TableName: table,
        Item: {
          ...keys.reversal(credit.userId, r.refundId),
          type: 'Reversal',
          source: 'paypal',
          eventType: r.eventType,
          userId: credit.userId,
          topupId: credit.topupId,
          captureId: r.captureId,
          refundId: r.refundId,
          currency: credit.currency,
          amount: r.amount,
          debited,
          owed,
          createdAt: at,
        },
      },
    },
    statementPut(reversalEntry(credit, r.refundId, debited, owed, now)),
  ]);
  return result.committed ? { kind: 'reversed', debited, owed } : result.outcome;
}
