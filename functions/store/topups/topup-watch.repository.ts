/**
 * The top-up watcher's own records (docs/topups.md): a USDC top-up's cursor over its reference's
 * signatures, the deposit account's cursor, which payments were credited already, and payments
 * that matched no top-up (recorded and alarmed once).
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import type { UnmatchedPayment, UsdcTopup } from '../../core/topups';
import { batchGetConsistent } from '../batch-get';
import { db } from '../client';
import { GSI1, INDEX_PARTITIONS, keys } from '../table';
import { conditionalWrite, outcome } from '../transact';
import { clean } from './topup.repository';

/**
 * Moves a PENDING USDC top-up's place in its reference's history (`scannedThrough`) from what
 * this run read to `to`; false when the top-up moved on or another run moved it first (harmless:
 * that run read the same history).
 */
export async function moveReferenceCursor(topup: UsdcTopup, to: string): Promise<boolean> {
  const result = await conditionalWrite(
    {
      Update: {
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
      },
    },
    () => outcome(false),
  );
  return result.committed;
}

/**
 * Whether a transaction was credited already, by any rail: its cross-rail guard (store/topups/chain-credit.ts:
 * a top-up or an x402 settlement), or the top-up guard of a credit made before that guard existed.
 * One BatchGetItem.
 */
export async function transferCreditedAlready(signature: string): Promise<boolean> {
  const found = await batchGetConsistent([keys.chainCredit(signature), keys.topupCredit('SOL', signature)]);
  return found.length > 0;
}

/** Records a payment that matched no top-up; true when this call recorded it (false: already known). */
export async function recordUnmatched(payment: UnmatchedPayment, now: Date): Promise<boolean> {
  const result = await conditionalWrite(
    {
      Put: {
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
      },
    },
    () => outcome(false),
  );
  return result.committed;
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
  const result = await conditionalWrite(
    {
      Put: {
        TableName: config().TABLE_NAME,
        Item: { ...keys.depositCursor(account), type: 'DepositCursor', signature: to, updatedAt: now.toISOString() },
        ConditionExpression: from === undefined ? 'attribute_not_exists(PK)' : 'signature = :from',
        ...(from === undefined ? {} : { ExpressionAttributeValues: { ':from': from } }),
      },
    },
    () => outcome(false),
  );
  return result.committed;
}
