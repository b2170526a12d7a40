/**
 * The reconciler's view of payouts: the in-flight index, which holds exactly the payouts that
 * are PENDING or PROCESSING, by status and age.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import type { InflightStatus, PayoutRef } from '../../core/payouts';
import { db } from '../client';
import { GSI1, INDEX_PARTITIONS, keys } from '../table';
import { conditionalWrite, outcome } from '../transact';

/**
 * While a payout is PENDING or PROCESSING it carries this GSI1 entry, so the reconciler finds
 * stale ones with one Query per status (GSI1SK `<status>#<updatedAt>#<payoutId>` sorts by age
 * within a status). The entry is removed on COMPLETED/FAILED, so the index holds only what is
 * in flight. One index partition: ~1,000 writes/s, three per payout, far above payout volume.
 */
export const INFLIGHT_PK = INDEX_PARTITIONS.payoutsInflight.key;
export const inflightIndex = (status: InflightStatus, updatedAt: string, payoutId: string) => ({
  GSI1PK: INFLIGHT_PK,
  GSI1SK: `${status}#${updatedAt}#${payoutId}`,
});

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
  const result = await conditionalWrite(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.payout(ref.agentId, ref.payoutId),
        UpdateExpression: 'SET updatedAt = :now, GSI1SK = :sk',
        // Only while still PENDING: a worker may have claimed it meanwhile.
        ConditionExpression: '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':now': nowIso, ':sk': inflightIndex('PENDING', nowIso, ref.payoutId).GSI1SK, ':pending': 'PENDING' },
      },
    },
    () => outcome('claimed'),
  );
  return result.committed;
}
