/**
 * Payouts (withdrawal records), the agent's in-flight payout lock, and the worker's lease.
 *
 * A withdrawal is ONE TransactWriteItems: the conditional debits of the agent's balance shards,
 * the PENDING payout, the lock item (at most one payout in flight per agent) and the
 * idempotency record. Every later transition is conditional on the state it leaves, and the
 * final one (COMPLETED, or FAILED with the gross refunded) releases the lock in the same
 * transaction. Layout and state machine: docs/payouts.md.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { config } from '../config';
import type { Currency, Minor } from '../core/money';
import type { RailState } from '../core/payout-rail';
import type { PayoutNetwork } from '../core/withdrawals';
import { randomShard, shardCredit } from './balance.repository';
import { IdempotencyRecordExistsError, type IdempotencyWrite } from './charge.repository';
import { db } from './client';
import { idempotencyPut } from './idempotency.repository';
import { GSI1, keys } from './table';
import { ConditionFailedError, type TransactItem, transactWrite } from './transact';

export type PayoutStatus = 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED';
export type InflightStatus = Extract<PayoutStatus, 'PENDING' | 'PROCESSING'>;

export interface Payout {
  id: string;
  agentId: string;
  currency: Currency;
  status: PayoutStatus;
  network: PayoutNetwork;
  /** Solana wallet address or PayPal e-mail / payer id, exactly as given. */
  walletAddress: string;
  /** Gross amount debited from the agent (minor units). */
  amount: Minor;
  fee: Minor;
  /** What the rail pays out: amount − fee. */
  netAmount: Minor;
  idempotencyKey: string;
  createdAt: string;
  /** Last transition or check; the reconciler measures staleness from here. */
  updatedAt: string;
  processedAt?: string;
  externalId?: string;
  txHash?: string;
  failureReason?: string;
  /** What the rail saved before acting (e.g. Solana signature + last valid block height). */
  railState?: RailState;
  /** How many times a worker or the reconciler has claimed it. */
  attempts: number;
}

export interface PayoutRef {
  agentId: string;
  payoutId: string;
}

/**
 * While a payout is PENDING or PROCESSING it carries this GSI1 entry, so the reconciler finds
 * stale ones with one Query per status (GSI1SK `<status>#<updatedAt>#<payoutId>` sorts by age
 * within a status). The entry is removed on COMPLETED/FAILED, so the index holds only what is
 * in flight. One index partition: ~1,000 writes/s, three per payout, far above payout volume.
 */
export const INFLIGHT_PK = 'PAYOUTS_INFLIGHT';
const inflightIndex = (status: InflightStatus, updatedAt: string, payoutId: string) => ({
  GSI1PK: INFLIGHT_PK,
  GSI1SK: `${status}#${updatedAt}#${payoutId}`,
});

/** The agent already has a payout in flight (the lock item exists). */
export class PayoutInProgressError extends Error {
  constructor() {
    super('payout already in progress');
    this.name = 'PayoutInProgressError';
  }
}

/** A shard held less than planned when the debit ran: read the balance again. */
export class BalanceChangedError extends Error {
  constructor() {
    super('agent balance changed since it was read');
    this.name = 'BalanceChangedError';
  }
}

/** Another attempt holds (or took over) this payout's lease, or its state moved on. */
export class LeaseLostError extends Error {
  constructor(readonly payoutId: string) {
    super(`lease on payout ${payoutId} lost`);
    this.name = 'LeaseLostError';
  }
}

/**
 * Commits a new PENDING payout: `debits` (conditional shard debits from `planShardDebit`),
 * the payout, the agent's lock and the idempotency record, all or nothing.
 * Throws IdempotencyRecordExistsError, PayoutInProgressError or BalanceChangedError, in that
 * order of precedence when several conditions failed.
 */
export async function commitWithdrawal(payout: Payout, debits: TransactItem[], idem: IdempotencyWrite, now: Date): Promise<void> {
  const table = config().TABLE_NAME;
  const payoutIndex = debits.length;
  const lockIndex = payoutIndex + 1;
  const idemIndex = lockIndex + 1;
  try {
    await transactWrite([
      ...debits,
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
      {
        Put: {
          TableName: table,
          Item: {
            ...keys.payoutLock(payout.agentId),
            type: 'PayoutLock',
            agentId: payout.agentId,
            payoutId: payout.id,
            createdAt: payout.createdAt,
          },
          // The lock exists exactly while one of the agent's payouts is PENDING or PROCESSING.
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      idempotencyPut(idem.scope, idem.key, idem.record, now),
    ]);
  } catch (error) {
    if (error instanceof ConditionFailedError) {
      if (error.failed.includes(idemIndex)) throw new IdempotencyRecordExistsError(error.oldItems.get(idemIndex));
      if (error.failed.includes(lockIndex)) throw new PayoutInProgressError();
      if (error.failed.some((i) => i < payoutIndex)) throw new BalanceChangedError();
    }
    throw error;
  }
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
  const pk = keys.payoutPartition(agentId);
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      ScanIndexForward: false,
      ConsistentRead: true,
      // One extra item says whether another page exists, so the last page has no cursor.
      Limit: opts.limit + 1,
      ...(opts.after ? { ExclusiveStartKey: { PK: pk, SK: opts.after } } : {}),
    }),
  );
  const items = (out.Items ?? []).map(toPayout);
  const payouts = items.slice(0, opts.limit);
  const more = items.length > opts.limit;
  return { payouts, lastId: more ? payouts[payouts.length - 1]?.id : undefined };
}

export type ClaimResult =
  | { kind: 'claimed'; payout: Payout }
  /** COMPLETED or FAILED: nothing left to do. */
  | { kind: 'final'; payout: Payout }
  /** PROCESSING under another attempt's unexpired lease. */
  | { kind: 'busy'; payout: Payout }
  | { kind: 'missing' };

/**
 * Takes a payout for one attempt: PENDING → PROCESSING, or re-takes a PROCESSING payout whose
 * previous attempt's lease has run out (that attempt crashed or gave up). The lease token fences
 * every later write of this attempt, so two attempts can never both save rail state or finish.
 */
export async function claimPayout(ref: PayoutRef, leaseToken: string, now: Date): Promise<ClaimResult> {
  const nowIso = now.toISOString();
  try {
    const out = await db().send(
      new UpdateCommand({
        TableName: config().TABLE_NAME,
        Key: keys.payout(ref.agentId, ref.payoutId),
        UpdateExpression:
          'SET #status = :processing, leaseToken = :token, leaseExpiresAt = :expires, updatedAt = :now, GSI1SK = :sk, ' +
          'attempts = if_not_exists(attempts, :zero) + :one',
        // Fresh, or in flight with a lease that has run out (0 = released by the last attempt).
        ConditionExpression: '#status = :pending OR (#status = :processing AND leaseExpiresAt < :nowMs)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':processing': 'PROCESSING',
          ':pending': 'PENDING',
          ':token': leaseToken,
          ':expires': leaseExpiry(now),
          ':now': nowIso,
          ':nowMs': now.getTime(),
          ':sk': inflightIndex('PROCESSING', nowIso, ref.payoutId).GSI1SK,
          ':zero': 0,
          ':one': 1,
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { kind: 'claimed', payout: toPayout(out.Attributes ?? {}) };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    if (!error.Item) return { kind: 'missing' };
    const payout = toPayout(unmarshall(error.Item));
    return { kind: payout.status === 'COMPLETED' || payout.status === 'FAILED' ? 'final' : 'busy', payout };
  }
}

/**
 * Persists the rail's progress on the payout before the rail acts on it, and renews the lease.
 * Throws LeaseLostError when this attempt no longer holds the payout: the rail must then stop.
 */
export async function saveRailState(payout: Payout, leaseToken: string, state: RailState, now: Date): Promise<void> {
  const nowIso = now.toISOString();
  await fencedUpdate(payout, leaseToken, {
    UpdateExpression: 'SET railState = :state, updatedAt = :now, GSI1SK = :sk, leaseExpiresAt = :expires',
    ExpressionAttributeValues: {
      ':state': state,
      ':now': nowIso,
      ':sk': inflightIndex('PROCESSING', nowIso, payout.id).GSI1SK,
      ':expires': leaseExpiry(now),
    },
  });
}

/**
 * The rail could not tell yet (unconfirmed, unclaimed, …): keep PROCESSING, note what the rail
 * knows, restart the reconciler's clock, and release the lease so the next check may claim it.
 */
export async function recordPendingCheck(payout: Payout, leaseToken: string, externalId: string | undefined, now: Date): Promise<void> {
  const nowIso = now.toISOString();
  await fencedUpdate(payout, leaseToken, {
    UpdateExpression: `SET updatedAt = :now, GSI1SK = :sk, leaseExpiresAt = :released${externalId ? ', externalId = :ext' : ''}`,
    ExpressionAttributeValues: {
      ':now': nowIso,
      ':sk': inflightIndex('PROCESSING', nowIso, payout.id).GSI1SK,
      ':released': 0,
      ...(externalId ? { ':ext': externalId } : {}),
    },
  });
}

/** PROCESSING → COMPLETED and the agent's lock released, in one transaction. */
export async function completePayout(
  payout: Payout,
  leaseToken: string,
  result: { externalId: string; txHash?: string | undefined },
  now: Date,
): Promise<void> {
  const nowIso = now.toISOString();
  await finalize(payout, [
    finalUpdate(payout, leaseToken, {
      set: `processedAt = :now, updatedAt = :now, externalId = :ext${result.txHash ? ', txHash = :tx' : ''}`,
      status: 'COMPLETED',
      values: { ':now': nowIso, ':ext': result.externalId, ...(result.txHash ? { ':tx': result.txHash } : {}) },
    }),
    releaseLock(payout),
  ]);
}

/** PROCESSING → FAILED, the gross amount credited back to the agent, and the lock released: one transaction. */
export async function failPayout(
  payout: Payout,
  leaseToken: string,
  result: { reason: string; externalId?: string | undefined },
  now: Date,
): Promise<void> {
  const nowIso = now.toISOString();
  await finalize(payout, [
    finalUpdate(payout, leaseToken, {
      set: `processedAt = :now, updatedAt = :now, failureReason = :reason${result.externalId ? ', externalId = :ext' : ''}`,
      status: 'FAILED',
      values: { ':now': nowIso, ':reason': result.reason, ...(result.externalId ? { ':ext': result.externalId } : {}) },
    }),
    shardCredit(payout.agentId, randomShard(), payout.currency, payout.amount, false),
    releaseLock(payout),
  ]);
}

/**
 * In-flight payouts of one status last touched before `before`, oldest first (eventually
 * consistent index: callers re-check each one with a conditional write).
 */
export async function listStaleInflight(status: InflightStatus, before: Date, limit: number): Promise<PayoutRef[]> {
  const refs: PayoutRef[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: config().TABLE_NAME,
        IndexName: GSI1.indexName,
        KeyConditionExpression: 'GSI1PK = :pk AND GSI1SK BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': INFLIGHT_PK, ':from': `${status}#`, ':to': `${status}#${before.toISOString()}` },
        ProjectionExpression: 'agentId, id',
        Limit: limit - refs.length,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of out.Items ?? []) refs.push({ agentId: String(item.agentId), payoutId: String(item.id) });
    start = out.LastEvaluatedKey;
  } while (start && refs.length < limit);
  return refs;
}

/** Restarts a PENDING payout's reconciler clock after its message was sent again. */
export async function touchPending(ref: PayoutRef, now: Date): Promise<boolean> {
  const nowIso = now.toISOString();
  try {
    await db().send(
      new UpdateCommand({
        TableName: config().TABLE_NAME,
        Key: keys.payout(ref.agentId, ref.payoutId),
        UpdateExpression: 'SET updatedAt = :now, GSI1SK = :sk',
        // Only while still PENDING: a worker may have claimed it meanwhile.
        ConditionExpression: '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':now': nowIso, ':sk': inflightIndex('PENDING', nowIso, ref.payoutId).GSI1SK, ':pending': 'PENDING' },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

function leaseExpiry(now: Date): number {
  return now.getTime() + config().PAYOUT_LEASE_SECONDS * 1000;
}

/** An update that applies only while this attempt holds the PROCESSING payout. */
async function fencedUpdate(
  payout: Payout,
  leaseToken: string,
  update: { UpdateExpression: string; ExpressionAttributeValues: Record<string, unknown> },
): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: config().TABLE_NAME,
        Key: keys.payout(payout.agentId, payout.id),
        UpdateExpression: update.UpdateExpression,
        ConditionExpression: '#status = :processing AND leaseToken = :token',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':processing': 'PROCESSING', ':token': leaseToken },
      }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw new LeaseLostError(payout.id);
    throw error;
  }
}

function finalUpdate(
  payout: Payout,
  leaseToken: string,
  opts: { set: string; status: 'COMPLETED' | 'FAILED'; values: Record<string, unknown> },
): TransactItem {
  return {
    Update: {
      TableName: config().TABLE_NAME,
      Key: keys.payout(payout.agentId, payout.id),
      // Leaving the in-flight index and dropping the lease: a final payout is never claimed again.
      UpdateExpression: `SET #status = :final, ${opts.set} REMOVE GSI1PK, GSI1SK, leaseToken, leaseExpiresAt`,
      ConditionExpression: '#status = :processing AND leaseToken = :token',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ...opts.values, ':final': opts.status, ':processing': 'PROCESSING', ':token': leaseToken },
    },
  };
}

function releaseLock(payout: Payout): TransactItem {
  return {
    Delete: {
      TableName: config().TABLE_NAME,
      Key: keys.payoutLock(payout.agentId),
      // Only this payout's lock; an absent lock (never expected) must not block finishing it.
      ConditionExpression: 'attribute_not_exists(PK) OR payoutId = :id',
      ExpressionAttributeValues: { ':id': payout.id },
    },
  };
}

/** Runs a final transition; item 0 is the fenced payout update. */
async function finalize(payout: Payout, items: TransactItem[]): Promise<void> {
  try {
    await transactWrite(items);
  } catch (error) {
    if (error instanceof ConditionFailedError && error.failed.includes(0)) throw new LeaseLostError(payout.id);
    throw error;
  }
}

function payoutAttributes(payout: Payout): Record<string, unknown> {
  return {
    id: payout.id,
    agentId: payout.agentId,
    currency: payout.currency,
    status: payout.status,
    network: payout.network,
    walletAddress: payout.walletAddress,
    amount: payout.amount,
    fee: payout.fee,
    netAmount: payout.netAmount,
    idempotencyKey: payout.idempotencyKey,
    createdAt: payout.createdAt,
    updatedAt: payout.updatedAt,
    attempts: payout.attempts,
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
    netAmount: Number(item.netAmount),
    idempotencyKey: String(item.idempotencyKey),
    createdAt: String(item.createdAt),
    updatedAt: String(item.updatedAt),
    ...optional('processedAt'),
    ...optional('externalId'),
    ...optional('txHash'),
    ...optional('failureReason'),
    ...(item.railState && typeof item.railState === 'object' ? { railState: item.railState as RailState } : {}),
    attempts: typeof item.attempts === 'number' ? item.attempts : 0,
  };
}
