/**
 * Held payouts (docs/payouts.md, "Held payouts"): the operator's side. The worker holds a payout
 * whose agent is disabled (payout-lease.repository.ts `holdPayout`); the operator lists them
 * through the in-flight index, releases one (HELD → PENDING, paid whatever the agent's state) or
 * cancels one (HELD → FAILED, the gross back to the agent's balance, one transaction with its
 * idempotency record). A HELD payout has no lease and nothing moving at its rail, so neither
 * needs one: each is one write conditioned on `status = HELD`.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import type { OutboxEvent } from '../../core/events';
import type { IdempotencyWrite } from '../../core/idempotency';
import { CANCELLED_BY_OPERATOR, type InflightStatus, type Payout } from '../../core/payouts';
import { randomShard, shardCredit } from '../charges/balance.repository';
import { db } from '../client';
import { withOutbox } from '../events/outbox';
import { idempotencyPut } from '../idempotency.repository';
import { GSI1, keys } from '../table';
import { conditionalWrite, named, outcome, transactWrite } from '../transact';
import { feeBasisGiveBack, toPayout } from './payout.repository';
import { INFLIGHT_PK, inflightIndex } from './payout-inflight.repository';

/** A page of payouts of one status from the in-flight index, oldest first. */
export interface InflightPage {
  payouts: Payout[];
  /** Where the next page starts (the last payout's index position), when more follow. */
  last?: InflightPosition;
}

/** A payout's place in the in-flight index: enough to continue a query after it. */
export interface InflightPosition {
  agentId: string;
  payoutId: string;
  sortKey: string;
}

/**
 * Payouts of `status` (HELD, or in flight), oldest first, `limit` at a time, after `after`. One
 * Query of the in-flight index (eventually consistent: an operator's list, never a decision).
 */
export async function listPayoutsByStatus(
  status: InflightStatus,
  opts: { limit: number; after?: InflightPosition },
): Promise<InflightPage> {
  const { after } = opts;
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      IndexName: GSI1.indexName,
      KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :status)',
      ExpressionAttributeValues: { ':pk': INFLIGHT_PK, ':status': `${status}#` },
      Limit: opts.limit + 1,
      ...(after
        ? { ExclusiveStartKey: { ...keys.payout(after.agentId, after.payoutId), GSI1PK: INFLIGHT_PK, GSI1SK: after.sortKey } }
        : {}),
    }),
  );
  const items = out.Items ?? [];
  const page = items.slice(0, opts.limit);
  const lastItem = page[page.length - 1];
  const more = items.length > opts.limit;
  return {
    payouts: page.map(toPayout),
    ...(more && lastItem
      ? { last: { agentId: String(lastItem.agentId), payoutId: String(lastItem.id), sortKey: String(lastItem.GSI1SK) } }
      : {}),
  };
}

export type ReleaseResult = { kind: 'released'; payout: Payout } | { kind: 'not-held'; payout: Payout } | { kind: 'missing' };

/**
 * HELD → PENDING with `releasedAt`: the reconciler sends it to the worker again once it is
 * RECONCILE_PENDING_AFTER_SECONDS old (the route sends nothing itself, so it needs no queue), and
 * the worker pays it although its agent is disabled (unless the agent's flag changed since).
 */
export async function releaseHeldPayout(agentId: string, payoutId: string, now: Date): Promise<ReleaseResult> {
  const nowIso = now.toISOString();
  const result = await conditionalWrite(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.payout(agentId, payoutId),
        UpdateExpression: 'SET #status = :pending, releasedAt = :now, updatedAt = :now, GSI1SK = :sk REMOVE heldAt, holdReason',
        ConditionExpression: '#status = :held',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':pending': 'PENDING',
          ':held': 'HELD',
          ':now': nowIso,
          ':sk': inflightIndex('PENDING', nowIso, payoutId).GSI1SK,
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    (old) => outcome(old),
  );
  if (result.committed) return { kind: 'released', payout: toPayout(result.attributes ?? {}) };
  return result.outcome ? { kind: 'not-held', payout: toPayout(result.outcome) } : { kind: 'missing' };
}

/**
 * HELD → FAILED (`cancelled by operator`), in ONE transaction: the payout, its gross credited back
 * to one of the agent's balance shards, its gross and fee given back to the fee basis, the lock
 * released, the idempotency record and the outbox item of `events` (payout.failed). Commits only
 * from HELD; otherwise answers `not-held` (a release, or another cancel, came first). Throws
 * IdempotencyRecordExistsError when the key was used.
 */
export async function cancelHeldPayout(
  payout: Payout,
  idem: IdempotencyWrite,
  now: Date,
  events: readonly OutboxEvent[],
): Promise<{ committed: true } | { committed: false; outcome: 'not-held' }> {
  const table = config().TABLE_NAME;
  const nowIso = now.toISOString();
  const result = await transactWrite<'not-held'>(
    withOutbox(
      [
        named(
          {
            Update: {
              TableName: table,
              Key: keys.payout(payout.agentId, payout.id),
              // Final: out of the in-flight index, as a FAILED payout the worker ends.
              UpdateExpression:
                'SET #status = :failed, processedAt = :now, updatedAt = :now, failureReason = :reason ' +
                'REMOVE GSI1PK, GSI1SK, heldAt, holdReason, releasedAt',
              ConditionExpression: '#status = :held',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':failed': 'FAILED', ':held': 'HELD', ':now': nowIso, ':reason': CANCELLED_BY_OPERATOR },
            },
          },
          { onConditionFailed: () => outcome('not-held' as const), precedence: 1 },
        ),
        shardCredit(payout.agentId, randomShard(), payout.currency, payout.amount),
        ...feeBasisGiveBack(payout, now),
        {
          Delete: {
            TableName: table,
            Key: keys.payoutLock(payout.agentId, payout.currency),
            ConditionExpression: 'attribute_not_exists(PK) OR payoutId = :id',
            ExpressionAttributeValues: { ':id': payout.id },
          },
        },
        idempotencyPut(idem, now),
      ],
      events,
      now,
    ),
  );
  return result.committed ? { committed: true } : { committed: false, outcome: 'not-held' };
}
