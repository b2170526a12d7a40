/**
 * Top-ups in DynamoDB (docs/topups.md). A top-up lives in its user's partition (`TOPUPS#<userId>`,
 * so another user's is simply not there), carries a GSI1 entry only while PENDING (the watcher's
 * work list, sorted by expiry), and has a lookup item from its Solana Pay reference or PayPal order
 * id. This file creates and reads them; how a PENDING top-up ends (credited exactly once, expired,
 * failed) is topup-completion.repository.ts, the watcher's cursors and unmatched payments
 * topup-watch.repository.ts.
 */

import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import { isCurrencyOn, isOnRail } from '../../core/money';
import { MAX_OPEN_TOPUPS, type Topup, type TopupFailureReason, TopupLimitError, type TopupStatus } from '../../core/topups';
import { db } from '../client';
import { readShardedQueue } from '../sharded-queue';
import { keys } from '../table';
import { named, type TransactEntry, transactWrite } from '../transact';

/**
 * Writes a new PENDING top-up with its lookup item (reference or order id) and takes one of the
 * payer's open-top-up slots, in one transaction: TopupLimitError when MAX_OPEN_TOPUPS are open,
 * however many requests race.
 */
export async function createTopup(topup: Topup, also: readonly TransactEntry[] = []): Promise<void> {
  const table = config().TABLE_NAME;
  const lookup = isOnRail(topup, 'solana') ? keys.topupReference(topup.reference) : keys.topupOrder(topup.orderId);
  const items: TransactEntry[] = [
    {
      Put: {
        TableName: table,
        Item: {
          ...keys.topup(topup.userId, topup.id),
          ...keys.pendingTopupIndex(topup.expiresAt, topup.id),
          type: 'Topup',
          ...clean(topup),
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    {
      Put: {
        TableName: table,
        Item: { ...lookup, type: 'TopupLookup', userId: topup.userId, topupId: topup.id },
        // A reference is 32 random bytes and an order id PayPal's own: a clash means a bug, not a retry.
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
  ];
  if (topup.holdsOpenSlot) {
    items.push(
      named(
        {
          Update: {
            TableName: table,
            Key: keys.openTopups(topup.userId),
            UpdateExpression: 'SET #open = if_not_exists(#open, :zero) + :one, #type = :type',
            // The cap, on the item every create and every end of this payer's top-ups goes through.
            ConditionExpression: 'attribute_not_exists(#open) OR #open < :max',
            ExpressionAttributeNames: { '#open': 'open', '#type': 'type' },
            ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':max': MAX_OPEN_TOPUPS, ':type': 'OpenTopups' },
          },
        },
        { onConditionFailed: () => new TopupLimitError() },
      ),
    );
  }
  // `also`: what joins the create (the console's idempotency record: a double submit opens one top-up).
  await transactWrite([...items, ...also]);
}

/** How many PENDING top-ups the payer has open (their slots taken). */
export async function openTopupCount(userId: string): Promise<number> {
  const out = await db().send(
    new GetCommand({
      TableName: config().TABLE_NAME,
      Key: keys.openTopups(userId),
      ConsistentRead: true,
      ProjectionExpression: '#open',
      ExpressionAttributeNames: { '#open': 'open' },
    }),
  );
  return typeof out.Item?.open === 'number' ? out.Item.open : 0;
}

export async function getTopup(userId: string, topupId: string): Promise<Topup | undefined> {
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.topup(userId, topupId), ConsistentRead: true }));
  return out.Item ? toTopup(out.Item) : undefined;
}

/** A user's top-ups, newest first; `after` is the last id of the previous page. */
export async function listTopups(userId: string, limit: number, after?: string): Promise<{ topups: Topup[]; more: boolean }> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      KeyConditionExpression: after ? 'PK = :pk AND SK < :after' : 'PK = :pk',
      ExpressionAttributeValues: { ':pk': keys.topupPartition(userId), ...(after ? { ':after': after } : {}) },
      ScanIndexForward: false,
      Limit: limit + 1,
    }),
  );
  const items = out.Items ?? [];
  return { topups: items.slice(0, limit).map(toTopup), more: items.length > limit };
}

/** The top-up a reference key or order id belongs to (any status); undefined when none. */
export async function findTopupBy(lookup: { reference: string } | { orderId: string }): Promise<Topup | undefined> {
  const key = 'reference' in lookup ? keys.topupReference(lookup.reference) : keys.topupOrder(lookup.orderId);
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: key, ConsistentRead: true }));
  if (!out.Item) return undefined;
  return getTopup(String(out.Item.userId), String(out.Item.topupId));
}

/**
 * PENDING top-ups, soonest expiry first, at most `limit` (the watcher's work list). From the
 * sparse GSI1 entry, so the cost grows with the pending top-ups, never with history: one Query per
 * partition of the list (`keys.pendingTopupPartitions`: the shards and the legacy one), merged
 * (store/sharded-queue.ts).
 */
export async function listPendingTopups(limit: number): Promise<Topup[]> {
  const items = await readShardedQueue(keys.pendingTopupPartitions(), { limit });
  return items.map(toTopup).filter((t) => t.status === 'PENDING');
}

function toTopup(item: Record<string, unknown>): Topup {
  const str = (v: unknown) => (v === undefined || v === null ? undefined : String(v));
  const base = {
    id: String(item.id),
    userId: String(item.userId),
    status: item.status as TopupStatus,
    createdAt: String(item.createdAt),
    expiresAt: String(item.expiresAt),
    amount: typeof item.amount === 'number' ? item.amount : undefined,
    externalId: str(item.externalId),
    completedAt: str(item.completedAt),
    failureReason: str(item.failureReason) as TopupFailureReason | undefined,
    holdsOpenSlot: item.holdsOpenSlot === true,
  };
  if (isCurrencyOn(item.currency, 'paypal')) {
    return { ...base, currency: 'USD', amount: Number(item.amount), orderId: String(item.orderId), approveUrl: String(item.approveUrl) };
  }
  return {
    ...base,
    currency: 'USDC',
    address: String(item.address),
    reference: String(item.reference),
    mint: String(item.mint),
    requestedAmount: typeof item.requestedAmount === 'number' ? item.requestedAmount : undefined,
    scannedThrough: str(item.scannedThrough),
  };
}

/** Drops undefined attributes (the document client refuses them). */
export function clean<T extends object>(value: T): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}
