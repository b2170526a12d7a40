/**
 * x402 settlements (docs/x402.md). One item per payment (`keys.x402Settlement`, keyed by the
 * transaction's message hash, which verify computes without a key) is both the settlement's state
 * and the credit-once guard:
 *   - `claimSettlement` writes it PENDING after every check and before the transaction is sent (one
 *     agent wins a payment; the loser is told whose it is). It holds the transaction's signature:
 *     the fee payer's, of a transaction that passed every check (functions/x402/facilitator.ts);
 *   - `getSettlement` finds it by the message hash: settle before it verifies, verify to refuse a
 *     payment already claimed;
 *   - `creditSettlement` is ONE TransactWriteItems: the settlement PENDING → CREDITED (only the
 *     claiming agent's, only once), the credit to one of the agent's balance shards, the payment
 *     record the listing and the ledger audit read, the idempotency record, the event;
 *   - `deferPendingSettlement` moves one the reconciler leaves PENDING to the back of its list;
 *   - `failSettlement` ends a PENDING one whose transaction failed on chain.
 * A claim is never given up: once written, its transaction may be on its way to the chain, and
 * only the chain ends it (credited, or failed).
 * Each transaction item carries the domain error its failed condition means, by name
 * (`named`, store/transact.ts), so no caller reads a cancellation by position.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';

import type { OutboxEvent } from '../../core/events';
import type { IdempotencyWrite } from '../../core/idempotency';
import {
  SettlementClaimedError,
  SettlementNotPendingError,
  type SettlementStatus,
  type X402Payment,
  type X402PaymentRecord,
  type X402Settlement,
} from '../../core/x402';
import { randomShard, shardCredit } from '../charges/balance.repository';
import { db } from '../client';
import { outboxPut } from '../events/outbox';
import { idempotencyPut } from '../idempotency.repository';
import { agentEnabledCheck } from '../identity/agent.repository';
import { newestFirstPage } from '../newest-first';
import { GSI1, INDEX_PARTITIONS, keys, PARTITIONS } from '../table';
import { chainCreditGuard } from '../topups/chain-credit';
import { ConditionFailedError, conditionalWrite, named, outcome, transactWrite } from '../transact';

const SETTLEMENT_TYPE = 'X402Settlement';
const PAYMENT_TYPE = 'X402Payment';

/**
 * Writes the agent's PENDING claim on a payment (its message hash). Succeeds when there is none; when
 * there is, SettlementClaimedError carries it (the caller decides: the same agent's claim is
 * finished, another agent's is refused).
 */
export async function claimSettlement(payment: X402Payment, now: Date): Promise<X402Settlement> {
  const createdAt = now.toISOString();
  const settlement: X402Settlement = { ...payment, status: 'PENDING', createdAt };
  const result = await conditionalWrite(
    {
      Put: {
        TableName: config().TABLE_NAME,
        Item: {
          ...keys.x402Settlement(payment.messageHash),
          ...keys.x402PendingIndex(createdAt, payment.signature),
          type: SETTLEMENT_TYPE,
          ...settlementAttributes(settlement),
        },
        // One claim per payment, ever: a credited or failed one stays as the guard.
        ConditionExpression: 'attribute_not_exists(PK)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    (old) => outcome(old),
  );
  if (result.committed) return settlement;
  const existing = result.outcome ? toSettlement(result.outcome) : await getSettlement(payment.messageHash);
  if (existing) throw new SettlementClaimedError(existing);
  throw new ConditionFailedError(['Put X402TX#']);
}

/** The settlement of a payment, by its transaction's message hash (strongly consistent), or undefined. */
export async function getSettlement(messageHash: string): Promise<X402Settlement | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: config().TABLE_NAME, Key: keys.x402Settlement(messageHash), ConsistentRead: true }),
  );
  return out.Item ? toSettlement(out.Item) : undefined;
}

/**
 * Credits a confirmed settlement: PENDING → CREDITED with the SettleResponse it answered, the
 * amount to one of the agent's shards, the payment record, the idempotency record and the event,
 * in one transaction. Outcomes: SettlementNotPendingError (credited or failed already: nothing
 * moved), IdempotencyRecordExistsError (this agent's answer for the signature exists),
 * BalanceLimitError, and AgentDisabledError: with `agentKeyHash` (settle's credit, made for the key
 * it was asked with), the agent item of that key is checked enabled in the same transaction.
 */
export async function creditSettlement(args: {
  settlement: X402Settlement;
  record: X402PaymentRecord;
  response: string;
  idempotency: IdempotencyWrite;
  events: readonly OutboxEvent[];
  now: Date;
  agentKeyHash?: string;
}): Promise<void> {
  const { settlement, record, now } = args;
  const table = config().TABLE_NAME;
  const at = now.toISOString();
  const outbox = outboxPut(args.events, now);
  // A replay (this agent's answer exists) speaks first: the idempotency record's own meaning.
  await transactWrite([
    named(
      {
        Update: {
          TableName: table,
          Key: keys.x402Settlement(settlement.messageHash),
          UpdateExpression:
            // Out of the PENDING work list, into the list the reconciler checks again at `finalized`.
            'SET #status = :credited, paymentId = :paymentId, creditedAt = :at, #response = :response, GSI1PK = :unfinal, GSI1SK = :unfinalAt',
          // Only the claiming agent's PENDING settlement is credited, and only once.
          ConditionExpression: '#status = :pending AND agentId = :agentId',
          ExpressionAttributeNames: { '#status': 'status', '#response': 'response' },
          ExpressionAttributeValues: {
            ':credited': 'CREDITED' satisfies SettlementStatus,
            ':pending': 'PENDING' satisfies SettlementStatus,
            ':agentId': settlement.agentId,
            ':paymentId': record.id,
            ':at': at,
            ':response': args.response,
            ':unfinal': keys.x402UnfinalizedIndex(at, settlement.signature).GSI1PK,
            ':unfinalAt': keys.x402UnfinalizedIndex(at, settlement.signature).GSI1SK,
          },
        },
      },
      { onConditionFailed: () => new SettlementNotPendingError() },
    ),
    // Its own meaning: BalanceLimitError.
    shardCredit(settlement.agentId, randomShard(), 'USDC', settlement.amount),
    {
      Put: {
        TableName: table,
        Item: { ...keys.x402Payment(record.agentId, record.id), type: PAYMENT_TYPE, ...record },
        // A fresh id: a clash is a bug, never a retry.
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    idempotencyPut(args.idempotency, now),
    ...(outbox ? [outbox] : []),
    // One transfer is credited once across every rail: a top-up credited with this transaction
    // refuses this credit (TransferCreditedElsewhereError), store/topups/chain-credit.ts.
    chainCreditGuard({ signature: settlement.signature, rail: 'x402', amount: settlement.amount, agentId: settlement.agentId }, at),
    // The kill switch, as a withdrawal's: the auth cache may be 30 s behind a disable or a rotation.
    ...(args.agentKeyHash === undefined ? [] : [agentEnabledCheck(args.agentKeyHash)]),
  ]);
}

/**
 * One UpdateItem of a settlement while it is PENDING (and `also` holds, when given); false when it
 * is not (credited, failed or released meanwhile): the reconciler's and settle's ends of a claim.
 */
async function updateWhilePending(
  messageHash: string,
  update: { expression: string; values: Record<string, unknown>; names?: Record<string, string>; also?: string },
): Promise<boolean> {
  const result = await conditionalWrite(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.x402Settlement(messageHash),
        UpdateExpression: update.expression,
        ConditionExpression: update.also ? `#status = :pending AND ${update.also}` : '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status', ...update.names },
        ExpressionAttributeValues: { ':pending': 'PENDING', ...update.values },
      },
    },
    () => outcome(false),
  );
  return result.committed;
}

/** PENDING → FAILED (the transaction failed on chain, so it can never succeed); false when not PENDING. */
export function failSettlement(messageHash: string, failure: string, now: Date): Promise<boolean> {
  return updateWhilePending(messageHash, {
    expression: 'SET #status = :failed, failure = :failure, endedAt = :at REMOVE GSI1PK, GSI1SK',
    values: { ':failed': 'FAILED', ':failure': failure.slice(0, 500), ':at': now.toISOString() },
  });
}

/**
 * Moves a PENDING settlement the reconciler looked at and left PENDING (not seen on chain, or held
 * at the agent's balance cap) to the back of the reconciler's list: its place is now `now`, so the
 * next runs take the others first and take it again once it is X402_RECONCILE_AFTER_SECONDS stale.
 * Without it, the oldest settlements that stay PENDING would fill every run's page and newer ones
 * would never be looked at. False when it is no longer PENDING (credited or failed meanwhile).
 */
export function deferPendingSettlement(settlement: Pick<X402Settlement, 'messageHash' | 'signature'>, now: Date): Promise<boolean> {
  return updateWhilePending(settlement.messageHash, {
    expression: 'SET GSI1SK = :sk, reconciledAt = :at',
    values: { ':sk': keys.x402PendingIndex(now.toISOString(), settlement.signature).GSI1SK, ':at': now.toISOString() },
  });
}

/** PENDING settlements that began before `before`, oldest first (the reconciler's work list). */
export async function listStalePendingSettlements(before: Date, limit: number): Promise<X402Settlement[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      IndexName: GSI1.indexName,
      KeyConditionExpression: 'GSI1PK = :pk AND GSI1SK < :before',
      ExpressionAttributeValues: { ':pk': INDEX_PARTITIONS.x402Pending.key, ':before': before.toISOString() },
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map(toSettlement);
}

/** CREDITED settlements credited before `before` and not yet checked at `finalized`, oldest first. */
export async function listUnfinalizedSettlements(before: Date, limit: number): Promise<X402Settlement[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      IndexName: GSI1.indexName,
      KeyConditionExpression: 'GSI1PK = :pk AND GSI1SK < :before',
      ExpressionAttributeValues: { ':pk': INDEX_PARTITIONS.x402Unfinalized.key, ':before': before.toISOString() },
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map(toSettlement);
}

/**
 * Ends a CREDITED settlement's check at `finalized`: it leaves the reconciler's list, with when it
 * was seen finalized, or with what the chain said instead (a mismatch, for an operator). False when
 * it is no longer on the list (another run ended it).
 */
export async function endFinalityCheck(messageHash: string, seen: { finalized: true } | { mismatch: string }, now: Date): Promise<boolean> {
  const mismatch = 'mismatch' in seen;
  const result = await conditionalWrite(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.x402Settlement(messageHash),
        UpdateExpression: `SET ${mismatch ? 'finalityMismatch = :value' : 'finalizedAt = :value'} REMOVE GSI1PK, GSI1SK`,
        // Only a CREDITED one still awaiting its check.
        ConditionExpression: '#status = :credited AND GSI1PK = :unfinal',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':credited': 'CREDITED',
          ':unfinal': INDEX_PARTITIONS.x402Unfinalized.key,
          ':value': mismatch ? seen.mismatch.slice(0, 500) : now.toISOString(),
        },
      },
    },
    () => outcome(false),
  );
  return result.committed;
}

/** One page of an agent's credited payments, newest first; `lastId` when another page exists. */
export async function listX402Payments(
  agentId: string,
  opts: { limit: number; after?: string },
): Promise<{ payments: X402PaymentRecord[]; lastId: string | undefined }> {
  const { items, lastId } = await newestFirstPage(keys.x402PaymentPartition(agentId), opts, toPaymentRecord);
  return { payments: items, lastId };
}

function settlementAttributes(s: X402Settlement): Record<string, unknown> {
  return {
    messageHash: s.messageHash,
    signature: s.signature,
    agentId: s.agentId,
    amount: s.amount,
    payer: s.payer,
    network: s.network,
    resource: s.resource,
    status: s.status,
    createdAt: s.createdAt,
    ...(s.feeLamports !== undefined ? { feeLamports: s.feeLamports } : {}),
  };
}

export function toSettlement(item: Record<string, unknown>): X402Settlement {
  return {
    // The key of a claim written before claims were keyed by message hash is its signature.
    messageHash: typeof item.messageHash === 'string' ? item.messageHash : String(item.PK).slice(PARTITIONS.x402Settlement.length),
    signature: String(item.signature),
    agentId: String(item.agentId),
    amount: Number(item.amount),
    payer: String(item.payer ?? ''),
    network: String(item.network),
    resource: typeof item.resource === 'string' ? item.resource : null,
    status: item.status as SettlementStatus,
    createdAt: String(item.createdAt),
    ...(typeof item.feeLamports === 'number' ? { feeLamports: item.feeLamports } : {}),
    ...(typeof item.paymentId === 'string' ? { paymentId: item.paymentId } : {}),
    ...(typeof item.creditedAt === 'string' ? { creditedAt: item.creditedAt } : {}),
    ...(typeof item.response === 'string' ? { response: item.response } : {}),
    ...(typeof item.failure === 'string' ? { failure: item.failure } : {}),
  };
}

export function toPaymentRecord(item: Record<string, unknown>): X402PaymentRecord {
  return {
    id: String(item.id),
    agentId: String(item.agentId),
    amount: Number(item.amount),
    payer: String(item.payer ?? ''),
    transaction: String(item.transaction),
    network: String(item.network),
    resource: typeof item.resource === 'string' ? item.resource : null,
    createdAt: String(item.createdAt),
    ...(typeof item.refunded === 'number' ? { refunded: item.refunded } : {}),
  };
}
