/**
 * The payout worker's side of a payout: a lease that fences every write of one attempt.
 *
 * An attempt claims the payout (PENDING → PROCESSING, or a PROCESSING payout whose last lease
 * ran out), saves rail progress before acting, and finishes it: COMPLETED, or FAILED with the
 * gross refunded, each releasing the agent's lock in the same transaction. Every write is
 * conditional on this attempt's lease token, so two attempts can never both act.
 */
import { config } from '../../config';
import { LeaseLostError } from '../../core/errors';
import type { OutboxEvent } from '../../core/events';
import { isX402Refund, type Payout, type PayoutRef, type RailState } from '../../core/payouts';
import { randomShard, shardCredit } from '../charges/balance.repository';
import { withOutbox } from '../events/outbox';
import { keys } from '../table';
import { conditionalWrite, type NamedItem, named, outcome, type TransactItem, transactWrite } from '../transact';
import { refundedGiveBack } from '../x402-refunds/x402-refund.repository';
import { feeBasisGiveBack, toPayout } from './payout.repository';
import { inflightIndex } from './payout-inflight.repository';

export type ClaimResult =
  | { kind: 'claimed'; payout: Payout }
  /** COMPLETED or FAILED: nothing left to do. */
  | { kind: 'final'; payout: Payout }
  /** PROCESSING under another attempt's unexpired lease. */
  | { kind: 'busy'; payout: Payout }
  /** HELD (its agent is disabled): the operator's to release or cancel, no attempt's. */
  | { kind: 'held'; payout: Payout }
  | { kind: 'missing' };

/**
 * Takes a payout for one attempt: PENDING → PROCESSING, or re-takes a PROCESSING payout whose
 * previous attempt's lease has run out (that attempt crashed or gave up). The lease token fences
 * every later write of this attempt, so two attempts can never both save rail state or finish.
 */
export async function claimPayout(ref: PayoutRef, leaseToken: string, now: Date): Promise<ClaimResult> {
  const nowIso = now.toISOString();
  const result = await conditionalWrite(
    {
      Update: {
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
      },
    },
    (old) => outcome(old),
  );
  if (result.committed) return { kind: 'claimed', payout: toPayout(result.attributes ?? {}) };
  if (!result.outcome) return { kind: 'missing' };
  const payout = toPayout(result.outcome);
  if (payout.status === 'HELD') return { kind: 'held', payout };
  return { kind: payout.status === 'COMPLETED' || payout.status === 'FAILED' ? 'final' : 'busy', payout };
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

/**
 * PROCESSING → COMPLETED and the agent's lock released, in one transaction; with it the outbox
 * item of `events` (payout.completed, use-cases/events/events.ts), so the event exists iff the payout completed.
 */
export async function completePayout(
  payout: Payout,
  leaseToken: string,
  result: { externalId: string; txHash?: string | undefined },
  now: Date,
  events: readonly OutboxEvent[] = [],
): Promise<void> {
  const nowIso = now.toISOString();
  await transactWrite(
    withOutbox(
      [
        finalUpdate(payout, leaseToken, {
          set: `processedAt = :now, updatedAt = :now, externalId = :ext${result.txHash ? ', txHash = :tx' : ''}`,
          status: 'COMPLETED',
          values: { ':now': nowIso, ':ext': result.externalId, ...(result.txHash ? { ':tx': result.txHash } : {}) },
        }),
        ...releaseLock(payout),
      ],
      events,
      now,
    ),
  );
}

/**
 * PROCESSING → FAILED, the gross amount credited back to the agent (and, for a counted payout,
 * its gross and fee given back to the agent's fee basis), the lock released and the outbox item
 * of `events` (payout.failed): one transaction.
 */
export async function failPayout(
  payout: Payout,
  leaseToken: string,
  result: { reason: string; externalId?: string | undefined },
  now: Date,
  events: readonly OutboxEvent[] = [],
): Promise<void> {
  const nowIso = now.toISOString();
  await transactWrite(
    withOutbox(
      [
        finalUpdate(payout, leaseToken, {
          set: `processedAt = :now, updatedAt = :now, failureReason = :reason${result.externalId ? ', externalId = :ext' : ''}`,
          status: 'FAILED',
          values: { ':now': nowIso, ':reason': result.reason, ...(result.externalId ? { ':ext': result.externalId } : {}) },
        }),
        // A refund whose shard is at its cap (BalanceLimitError): never expected, the gross came out of these shards.
        shardCredit(payout.agentId, randomShard(), payout.currency, payout.amount),
        // Its fee back to the agent's fee basis with the gross (core/fees.ts).
        ...feeBasisGiveBack(payout, now),
        // An x402 refund's amount back off its payment's `refunded` (DESIGN §28).
        ...refundedGiveBack(payout),
        ...releaseLock(payout),
      ],
      events,
      now,
    ),
  );
}

/**
 * PROCESSING → HELD (docs/payouts.md, "Held payouts"): this attempt found it may not pay (the
 * agent is disabled) and started nothing at the rail. The money stays debited and the lock held;
 * the lease is dropped and its index entry moves to `HELD#`, where the reconciler never looks and
 * the operator's list does. A release given before is used up (a new hold needs a new release).
 */
export async function holdPayout(payout: Payout, leaseToken: string, reason: string, now: Date): Promise<void> {
  const nowIso = now.toISOString();
  await fencedUpdate(payout, leaseToken, {
    UpdateExpression:
      'SET #status = :held, heldAt = :now, holdReason = :reason, updatedAt = :now, GSI1SK = :sk REMOVE leaseToken, leaseExpiresAt, releasedAt',
    ExpressionAttributeValues: {
      ':held': 'HELD',
      ':now': nowIso,
      ':reason': reason,
      ':sk': inflightIndex('HELD', nowIso, payout.id).GSI1SK,
    },
  });
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
  await conditionalWrite(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.payout(payout.agentId, payout.id),
        UpdateExpression: update.UpdateExpression,
        ConditionExpression: '#status = :processing AND leaseToken = :token',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ...update.ExpressionAttributeValues, ':processing': 'PROCESSING', ':token': leaseToken },
      },
    },
    () => new LeaseLostError(payout.id),
  );
}

/** The fenced final update; failed, this attempt lost its lease (LeaseLostError), before anything else. */
function finalUpdate(
  payout: Payout,
  leaseToken: string,
  opts: { set: string; status: 'COMPLETED' | 'FAILED'; values: Record<string, unknown> },
): NamedItem {
  const item = {
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
  return named(item, { onConditionFailed: () => new LeaseLostError(payout.id), precedence: 1 });
}

function releaseLock(payout: Payout): TransactItem[] {
  // An x402 refund takes no lock (store/x402-refunds): a withdrawal's lock must stay where it is.
  if (isX402Refund(payout)) return [];
  return [
    {
      Delete: {
        TableName: config().TABLE_NAME,
        Key: keys.payoutLock(payout.agentId, payout.currency),
        // Only this payout's lock; an absent lock (never expected) must not block finishing it.
        ConditionExpression: 'attribute_not_exists(PK) OR payoutId = :id',
        ExpressionAttributeValues: { ':id': payout.id },
      },
    },
  ];
}
