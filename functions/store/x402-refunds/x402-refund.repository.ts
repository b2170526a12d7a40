/**
 * Refunds of x402 payments (DESIGN §28, docs/x402.md "Refunds"). A refund is a payout (core/payouts.ts,
 * `paymentId` set) kept in its own partition (`keys.payout` routes `xr…` ids to `X402REFUND#<agentId>`),
 * so the payout worker, its lease, the signer's check and the reconciler pay it exactly as they pay a
 * USDC withdrawal, and a withdrawal list never shows it.
 *
 * A refund is ONE TransactWriteItems: the conditional debits of the agent's USDC shards, the PENDING
 * refund (with its in-flight index entry: the reconciler re-sends or finishes it), the payment's
 * `refunded` counter moved on under the condition that it stays within the payment, and the
 * idempotency record. No payout lock (refunds of one payment may be in flight together, and beside a
 * withdrawal), and no kill-switch check: a disabled agent may still give money back.
 */
import { config } from '../../config';
import { StaleReadError } from '../../core/errors';
import type { IdempotencyWrite } from '../../core/idempotency';
import type { AgentLedger, ShardDebit } from '../../core/ledger';
import type { Payout } from '../../core/payouts';
import type { X402PaymentRecord } from '../../core/x402';
import { batchGetConsistent } from '../batch-get';
import { agentLedgerOf, agentShardKeys, shardDebits } from '../charges/balance.repository';
import { idempotencyPut } from '../idempotency.repository';
import { payoutAttributes } from '../payouts/payout.repository';
import { inflightIndex } from '../payouts/payout-inflight.repository';
import { keys } from '../table';
import { named, type TransactItem, transactWrite } from '../transact';
import { toPaymentRecord } from '../x402-facilitator/x402.repository';

/**
 * What a refund reads, in one strongly consistent BatchGetItem: the agent's balance shards and the
 * payment (undefined for an unknown id or another agent's: its key names the agent).
 */
export async function readRefundBasis(agentId: string, paymentId: string): Promise<{ ledger: AgentLedger; payment?: X402PaymentRecord }> {
  const paymentKey = keys.x402Payment(agentId, paymentId);
  const items = await batchGetConsistent([...agentShardKeys(agentId), paymentKey]);
  const payment = items.find((item) => item.PK === paymentKey.PK && item.SK === paymentKey.SK);
  const ledger = agentLedgerOf(items.filter((item) => item !== payment));
  return payment ? { ledger, payment: toPaymentRecord(payment) } : { ledger };
}

/**
 * Commits a PENDING refund: the shard debits of `plan`, the refund, the payment's `refunded` moved on
 * by the refund's amount and the idempotency record, all or nothing. `payment` is the payment as read.
 * Throws IdempotencyRecordExistsError (a replay), or StaleReadError when a shard or the payment moved
 * since they were read (another refund of it committed first): the caller reads again and decides.
 */
export async function commitX402Refund(
  refund: Payout,
  payment: X402PaymentRecord,
  plan: readonly ShardDebit[],
  idem: IdempotencyWrite,
  now: Date,
): Promise<void> {
  const left = payment.amount - refund.amount;
  if (left < 0 || refund.paymentId !== payment.id) throw new Error('a refund past its payment is never committed');
  await transactWrite([
    // Each debit's failure: the balance moved since the plan was made (StaleReadError).
    ...shardDebits(refund.agentId, 'USDC', plan),
    {
      Put: {
        TableName: config().TABLE_NAME,
        Item: {
          ...keys.payout(refund.agentId, refund.id),
          ...inflightIndex('PENDING', refund.updatedAt, refund.id),
          type: 'X402Refund',
          ...payoutAttributes(refund),
        },
        // A fresh id: a clash is a bug, never a retry.
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    named(
      {
        Update: {
          TableName: config().TABLE_NAME,
          Key: keys.x402Payment(refund.agentId, payment.id),
          UpdateExpression: 'SET refunded = if_not_exists(refunded, :zero) + :amount, refundedAt = :now',
          // Never past the payment: what was refunded before leaves room for this one. The payment's
          // first refund (the one that may create the payer's token account) is first only while
          // nothing was refunded yet.
          ConditionExpression: refund.createsTokenAccount
            ? 'attribute_exists(PK) AND (attribute_not_exists(refunded) OR refunded = :zero)'
            : 'attribute_exists(PK) AND (attribute_not_exists(refunded) OR refunded <= :left)',
          ExpressionAttributeValues: {
            ':zero': 0,
            ':amount': refund.amount,
            ':now': now.toISOString(),
            ...(refund.createsTokenAccount ? {} : { ':left': left }),
          },
        },
      },
      { onConditionFailed: () => new StaleReadError('x402 payment refunded') },
    ),
    idempotencyPut(idem, now),
  ]);
}

/**
 * What a FAILED refund gives back beside its gross to the agent (store/payouts/payout-lease.repository.ts
 * `failPayout`): its amount off the payment's `refunded`, so the payment may be refunded again.
 */
export function refundedGiveBack(refund: Pick<Payout, 'agentId' | 'paymentId' | 'amount'>): TransactItem[] {
  if (refund.paymentId === undefined) return [];
  return [
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.x402Payment(refund.agentId, refund.paymentId),
        UpdateExpression: 'ADD refunded :minus',
        // It was counted with the refund; never expected to go below zero.
        ConditionExpression: 'refunded >= :amount',
        ExpressionAttributeValues: { ':minus': -refund.amount, ':amount': refund.amount },
      },
    },
  ];
}
