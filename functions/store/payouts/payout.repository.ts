/**
 * Payouts (withdrawal records): the withdrawal's commit and the agent-facing reads.
 *
 * A withdrawal is ONE TransactWriteItems: the conditional debits of the agent's balance shards,
 * the PENDING payout, the lock item (at most one payout in flight per agent) and the
 * idempotency record. Every later transition is the worker's (payout-lease.repository.ts) and
 * the reconciler finds stragglers through the in-flight index (payout-inflight.repository.ts).
 * Layout and state machine: docs/payouts.md.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import { PayoutInProgressError, StaleReadError } from '../../core/errors';
import { type FeeBasis, NO_FEE_BASIS } from '../../core/fees';
import type { IdempotencyWrite } from '../../core/idempotency';
import type { AgentLedger, ShardDebit } from '../../core/ledger';
import type { Currency } from '../../core/money';
import type { Payout, PayoutStatus, RailState } from '../../core/payouts';
import type { PayoutNetwork } from '../../core/withdrawals';
import { batchGetConsistent } from '../batch-get';
import { agentLedgerOf, agentShardKeys, shardDebits } from '../charges/balance.repository';
import { db } from '../client';
import { idempotencyPut } from '../idempotency.repository';
import { agentEnabledCheck } from '../identity/agent.repository';
import { newestFirstPage } from '../newest-first';
import { readMinor } from '../numbers';
import { keys } from '../table';
import { type NamedItem, named, type TransactItem, transactWrite } from '../transact';
import { inflightIndex } from './payout-inflight.repository';

/**
 * Commits a new PENDING payout: the conditional shard debits of `plan` (core/ledger.ts),
 * the payout, the agent's lock for this currency, its fee basis moved on from `basis` as read
 * (undefined: none yet), the idempotency record and the kill switch (the agent item of
 * `agentKeyHash` still enabled), all or nothing. Throws
 * IdempotencyRecordExistsError, AgentDisabledError, PayoutInProgressError or StaleReadError, in
 * that order of precedence when several conditions failed.
 */
export async function commitWithdrawal(
  payout: Payout,
  agentKeyHash: string,
  plan: readonly ShardDebit[],
  idem: IdempotencyWrite,
  now: Date,
  basis: FeeBasis | undefined,
): Promise<void> {
  const table = config().TABLE_NAME;
  await transactWrite([
    feeBasisAdvance(payout, basis, now),
    // Each debit's failure: the balance moved since the plan was made (StaleReadError).
    ...shardDebits(payout.agentId, payout.currency, plan),
    {
      Put: {
        TableName: table,
        Item: {
          ...keys.payout(payout.agentId, payout.id),
          ...inflightIndex('PENDING', payout.updatedAt, payout.id),
          type: 'Payout',
          ...payoutAttributes(payout),
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    named(
      {
        Put: {
          TableName: table,
          Item: {
            ...keys.payoutLock(payout.agentId, payout.currency),
            type: 'PayoutLock',
            agentId: payout.agentId,
            currency: payout.currency,
            payoutId: payout.id,
            createdAt: payout.createdAt,
          },
          // The lock exists exactly while one of the agent's payouts in this currency is PENDING or
          // PROCESSING: a PayPal payout UNCLAIMED for weeks never blocks a USDC withdrawal.
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      // Before a stale balance: another payout in flight is the answer, whatever the shards say.
      { onConditionFailed: () => new PayoutInProgressError(), precedence: 1 },
    ),
    idempotencyPut(idem, now),
    agentEnabledCheck(agentKeyHash),
  ]);
}

/**
 * What a withdrawal reads, in one strongly consistent BatchGetItem: the agent's balance shards, and
 * its fee basis in `currency` (core/fees.ts: what its counted payouts withdrew and paid in fees;
 * undefined before its first counted withdrawal), which the commit is conditioned on.
 */
export async function readLedgerAndFeeBasis(agentId: string, currency: Currency): Promise<{ ledger: AgentLedger; basis?: FeeBasis }> {
  const feeKey = keys.payoutFees(agentId, currency);
  const items = await batchGetConsistent([...agentShardKeys(agentId), feeKey]);
  const fees = items.find((item) => item.PK === feeKey.PK && item.SK === feeKey.SK);
  const ledger = agentLedgerOf(items.filter((item) => item !== fees));
  return fees ? { ledger, basis: { withdrawn: readMinor(fees, 'withdrawn'), feesPaid: readMinor(fees, 'feesPaid') } } : { ledger };
}

/**
 * The fee basis moved on by this payout's gross and fee, conditioned on it being as read: the lock
 * (same transaction) keeps other withdrawals out, but the refund of the payout in flight may commit
 * between the read and this commit, which then reads again (StaleReadError), so the basis is exact.
 */
function feeBasisAdvance(payout: Payout, basis: FeeBasis | undefined, now: Date): NamedItem {
  const read = basis ?? NO_FEE_BASIS;
  return named(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.payoutFees(payout.agentId, payout.currency),
        UpdateExpression:
          'SET withdrawn = :withdrawn, feesPaid = :feesPaid, updatedAt = :now, agentId = :agentId, currency = :currency, #type = :type',
        ConditionExpression: basis === undefined ? 'attribute_not_exists(PK)' : 'withdrawn = :was AND feesPaid = :paid',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: {
          ':withdrawn': read.withdrawn + payout.amount,
          ':feesPaid': read.feesPaid + payout.fee,
          ':now': now.toISOString(),
          ':agentId': payout.agentId,
          ':currency': payout.currency,
          ':type': 'PayoutFees',
          ...(basis === undefined ? {} : { ':was': basis.withdrawn, ':paid': basis.feesPaid }),
        },
      },
    },
    { onConditionFailed: () => new StaleReadError('payout fee basis') },
  );
}

/**
 * What a refunded payout (FAILED, or cancelled by the operator) gives back to its agent's fee
 * basis: its gross and its fee, when its fee was counted there (payouts from before the basis
 * existed were not). Only ever the payout committed last in its currency (one is in flight at a
 * time), so the basis returns exactly to what it was before that withdrawal.
 */
export function feeBasisGiveBack(payout: Payout, now: Date): TransactItem[] {
  if (!payout.feeCounted) return [];
  return [
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.payoutFees(payout.agentId, payout.currency),
        UpdateExpression: 'SET updatedAt = :now ADD withdrawn :gross, feesPaid :fee',
        // It was written with the payout; never expected to be missing, and never to go below zero.
        ConditionExpression: 'withdrawn >= :minusGross AND feesPaid >= :minusFee',
        ExpressionAttributeValues: {
          ':now': now.toISOString(),
          ':gross': -payout.amount,
          ':fee': -payout.fee,
          ':minusGross': payout.amount,
          ':minusFee': payout.fee,
        },
      },
    },
  ];
}

/** One agent's payout (strongly consistent); undefined for an unknown id or another agent's. */
export async function getPayout(agentId: string, payoutId: string): Promise<Payout | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: config().TABLE_NAME, Key: keys.payout(agentId, payoutId), ConsistentRead: true }),
  );
  return out.Item ? toPayout(out.Item) : undefined;
}

export interface PayoutPage {
  payouts: Payout[];
  /** Id of the last payout returned when more follow. */
  lastId: string | undefined;
}

/** A page of an agent's payouts, newest first, continuing after `after` when given (one query). */
export async function listPayouts(agentId: string, opts: { limit: number; after?: string }): Promise<PayoutPage> {
  const { items, lastId } = await newestFirstPage(keys.payoutPartition(agentId), opts, toPayout);
  return { payouts: items, lastId };
}

export function payoutAttributes(payout: Payout): Record<string, unknown> {
  return {
    id: payout.id,
    agentId: payout.agentId,
    currency: payout.currency,
    status: payout.status,
    network: payout.network,
    walletAddress: payout.walletAddress,
    amount: payout.amount,
    fee: payout.fee,
    // Absent means 0: payouts that create no token account (and every payout from before) carry none.
    ...(payout.accountCreationFee > 0 ? { accountCreationFee: payout.accountCreationFee } : {}),
    netAmount: payout.netAmount,
    // Its fee was computed from, and added to, the agent's fee basis (absent on older payouts).
    ...(payout.feeCounted ? { feeCounted: true } : {}),
    idempotencyKey: payout.idempotencyKey,
    createdAt: payout.createdAt,
    updatedAt: payout.updatedAt,
    attempts: payout.attempts,
    // An x402 refund's payment (DESIGN §28); absent on withdrawals.
    ...(payout.paymentId !== undefined ? { paymentId: payout.paymentId } : {}),
    ...(payout.createsTokenAccount ? { createsTokenAccount: true } : {}),
  };
}

export function toPayout(item: Record<string, unknown>): Payout {
  const optional = (name: string) => (typeof item[name] === 'string' ? { [name]: item[name] as string } : {});
  return {
    id: String(item.id),
    agentId: String(item.agentId),
    currency: item.currency as Currency,
    status: item.status as PayoutStatus,
    network: item.network as PayoutNetwork,
    walletAddress: String(item.walletAddress),
    amount: Number(item.amount),
    fee: Number(item.fee),
    accountCreationFee: typeof item.accountCreationFee === 'number' ? item.accountCreationFee : 0,
    netAmount: Number(item.netAmount),
    ...(item.feeCounted === true ? { feeCounted: true } : {}),
    idempotencyKey: String(item.idempotencyKey),
    createdAt: String(item.createdAt),
    updatedAt: String(item.updatedAt),
    ...optional('processedAt'),
    ...optional('externalId'),
    ...optional('txHash'),
    ...optional('failureReason'),
    ...optional('heldAt'),
    ...optional('holdReason'),
    ...optional('releasedAt'),
    ...(item.railState && typeof item.railState === 'object' ? { railState: item.railState as RailState } : {}),
    attempts: typeof item.attempts === 'number' ? item.attempts : 0,
    ...optional('paymentId'),
    ...(item.createsTokenAccount === true ? { createsTokenAccount: true } : {}),
  };
}
