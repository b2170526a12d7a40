/**
 * x402 purchases' own writes and reads (DESIGN §22, use-cases/x402-purchases/purchases.ts). A purchase is a hold
 * (charge.repository.ts `commitCharge`, the same transaction as any charge's); what only a purchase
 * has is here: its signed payment recorded once, the agent's listing, and the reconciler's queue of
 * signed purchases (by when each is next due, a backoff for those its search cannot reach). Its
 * capture and release are `settlePending` with the `purchase` option.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import { type Charge, countedOf } from '../../core/charges';
import { AgentBlockedError } from '../../core/errors';
import type { SignedPurchase } from '../../core/purchases';
import { randomShard, shardEnabledCheck } from '../charges/balance.repository';
import { type PendingCharge, pendingChargeKey } from '../charges/charge-pending.repository';
import { toCharge } from '../charges/charge-read.repository';
import { grantInactiveError } from '../charges/grant-charge';
import { assumeGrantCounted, grantSettleItem } from '../charges/grant-settlement-items';
import { db } from '../client';
import { GSI1, INDEX_PARTITIONS, keys, TTL_ATTRIBUTE } from '../table';
import { conditionalWrite, named, outcome, type TransactEntry, transactWrite } from '../transact';

/** What a capture of the hold would require now, as conditions on items this transaction does not write. */
function capturable(pending: PendingCharge, now: Date): TransactEntry[] {
  const items: TransactEntry[] = [
    shardEnabledCheck(pending.agentId, randomShard(), 1),
    named(
      {
        ConditionCheck: {
          TableName: config().TABLE_NAME,
          Key: keys.user(pending.userId),
          ConditionExpression: 'attribute_not_exists(policy.agents.#blk.blocked) OR policy.agents.#blk.blocked <> :blocked',
          ExpressionAttributeNames: { '#blk': pending.agentId },
          ExpressionAttributeValues: { ':blocked': true },
        },
      },
      { onConditionFailed: () => new AgentBlockedError(), precedence: 1 },
    ),
  ];
  if (pending.grantId !== undefined) {
    const check = grantSettleItem({ userId: pending.userId, grantId: pending.grantId }, 0, countedOf(pending), assumeGrantCounted, {
      activeAt: now,
    });
    if (check) items.push(named(check, { onConditionFailed: (old) => grantInactiveError(old, now), precedence: 1 }));
  }
  return items;
}

/** Another writer recorded the purchase's payment first, or it is no longer waiting for one: read it again. */
export class PurchaseMovedOnError extends Error {
  constructor() {
    super('the purchase is no longer waiting for its payment');
    this.name = 'PurchaseMovedOnError';
  }
}

/**
 * Records the payment signed for a purchase that waits for it (PENDING, `capture`, none signed yet,
 * as read: `expiresAt` unchanged), once: the charge's terms and deadline, and its marker moved from
 * the sweeper's queue to the reconciler's (`keys.signedPurchaseIndex`), so no clock ends the hold
 * while the transfer may still land. Throws PurchaseMovedOnError when another writer won or the
 * hold's time is up; the payment signed here is then dropped unseen, never answered.
 *
 * Recording it is the moment the hot wallet's USDC is committed (nothing but the chain ends the
 * hold after it), so it must still find what a capture finds: the agent enabled (AgentDisabledError),
 * not blocked by its payer (AgentBlockedError), its grant active (GrantRevokedError,
 * GrantExpiredError). An approved purchase is signed only on the agent's first GET, which may come
 * after the payer revoked the grant or blocked the agent.
 */
export async function recordSignedPurchase(pending: PendingCharge, signed: SignedPurchase, expiresAt: string, now: Date): Promise<void> {
  const table = config().TABLE_NAME;
  // Moved on (released, declined, signed by another) speaks first: the payer's own ending is the answer.
  const moved = { onConditionFailed: () => new PurchaseMovedOnError(), precedence: 2 };
  const result = await transactWrite<never>([
    named(
      {
        Update: {
          TableName: table,
          Key: pendingChargeKey(pending),
          UpdateExpression: 'SET #xp.signed = :signed, expiresAt = :expiresAt',
          ConditionExpression:
            '#status = :pending AND pendingReason = :capture AND expiresAt = :seen AND expiresAt > :now AND attribute_exists(#xp) AND attribute_not_exists(#xp.signed)',
          ExpressionAttributeNames: { '#xp': 'purchase', '#status': 'status' },
          ExpressionAttributeValues: {
            ':signed': signed,
            ':expiresAt': expiresAt,
            ':pending': 'PENDING',
            ':capture': 'capture',
            ':seen': pending.expiresAt,
            ':now': now.toISOString(),
          },
        },
      },
      moved,
    ),
    named(
      {
        Update: {
          TableName: table,
          Key: keys.pendingCharge(pending.chargeId),
          UpdateExpression: 'SET expiresAt = :expiresAt, GSI1PK = :pk, GSI1SK = :sk, signedAt = :signedAt, lastValidBlockHeight = :lvbh',
          ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(settledAt) AND expiresAt = :seen',
          ExpressionAttributeValues: {
            ':expiresAt': expiresAt,
            ':pk': keys.signedPurchaseIndex(signed.signedAt, pending.chargeId).GSI1PK,
            ':sk': keys.signedPurchaseIndex(signed.signedAt, pending.chargeId).GSI1SK,
            ':signedAt': signed.signedAt,
            ':lvbh': signed.lastValidBlockHeight,
            ':seen': pending.expiresAt,
          },
        },
      },
      moved,
    ),
    named(
      {
        Put: {
          TableName: table,
          Item: {
            ...keys.idempotency(SIGNATURE_SCOPE, signed.authoritySignature),
            type: 'PurchaseSignature',
            chargeId: pending.chargeId,
            // Long past the message's blockhash: after that no fresh signing can make it again.
            [TTL_ATTRIBUTE]: Math.floor(now.getTime() / 1000) + SIGNATURE_TTL_SECONDS,
          },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      { onConditionFailed: () => new PurchaseMessageTakenError(), precedence: 1.5 },
    ),
    ...capturable(pending, now),
  ]);
  if (!result.committed) throw new PurchaseMovedOnError();
}

/**
 * One hot wallet signature, one purchase. The message is built from the requirements and the
 * latest finalized blockhash alone; with a seller's fixed `extra.memo` (no random nonce) two
 * purchases of the same requirements in one slot are the same bytes, and ed25519 signs them alike.
 * The chain shows the transfer by that signature, so one landed transfer would capture both: a
 * payer charged for a payment never made (test/security/x402-purchase-same-message.e2e.test.ts).
 */
const SIGNATURE_SCOPE = 'x402-purchase-signature';
const SIGNATURE_TTL_SECONDS = 86_400;

/** The message signed is already another purchase's (same requirements, same blockhash): sign again on a newer blockhash. */
export class PurchaseMessageTakenError extends Error {
  constructor() {
    super("the signed message is another purchase's");
    this.name = 'PurchaseMessageTakenError';
  }
}

/** One page of an agent's purchases, newest first, after `after` (a charge id) when given. */
export async function listAgentPurchases(
  agentId: string,
  opts: { limit: number; after?: string },
): Promise<{ charges: Charge[]; lastId?: string }> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      IndexName: GSI1.indexName,
      KeyConditionExpression: opts.after ? 'GSI1PK = :pk AND GSI1SK < :after' : 'GSI1PK = :pk',
      ExpressionAttributeValues: {
        ':pk': `${INDEX_PARTITIONS.agentPurchases.key}${agentId}`,
        ...(opts.after ? { ':after': opts.after } : {}),
      },
      ScanIndexForward: false,
      Limit: opts.limit,
    }),
  );
  const charges = (out.Items ?? []).map(toCharge);
  return { charges, ...(out.LastEvaluatedKey ? { lastId: String(out.LastEvaluatedKey.GSI1SK) } : {}) };
}

/** A signed purchase waiting for the chain, as its marker in the reconciler's queue shows it. */
export interface SignedPending {
  chargeId: string;
  agentId: string;
  signedAt: string;
  lastValidBlockHeight: number;
  /** Its place in the queue as read (GSI1SK): a deferral is conditioned on it. */
  queuedAs: string;
  /** The last wait a search that could not reach it gave it; absent until one could not. */
  searchBackoffSeconds?: number;
}

/** Where the next page of due purchases starts (DynamoDB's LastEvaluatedKey, opaque to callers). */
export type DueCursor = Record<string, unknown>;

const signedQueue = () => ({
  TableName: config().TABLE_NAME,
  IndexName: GSI1.indexName,
  ExpressionAttributeValues: { ':pk': INDEX_PARTITIONS.signedPurchases.key },
});

/**
 * One page of the signed purchases still PENDING that are due by `now` (the index is eventually
 * consistent: a settled one may show), soonest due first; `next` when another page may follow. The
 * sort key is the due time, so the ones waiting out a backoff are past the key condition's end and
 * never read.
 */
export async function listDuePurchases(
  now: Date,
  opts: { limit: number; after?: DueCursor },
): Promise<{ due: SignedPending[]; next?: DueCursor }> {
  const queue = signedQueue();
  const out = await db().send(
    new QueryCommand({
      ...queue,
      // An ISO time sorts before every `<that time>#<chargeId>`: due strictly before now.
      KeyConditionExpression: 'GSI1PK = :pk AND GSI1SK < :now',
      ExpressionAttributeValues: { ...queue.ExpressionAttributeValues, ':now': now.toISOString() },
      ScanIndexForward: true,
      Limit: opts.limit,
      ...(opts.after ? { ExclusiveStartKey: opts.after } : {}),
    }),
  );
  const due = (out.Items ?? []).map((item) => ({
    chargeId: String(item.chargeId),
    agentId: String(item.agentId),
    signedAt: String(item.signedAt),
    lastValidBlockHeight: Number(item.lastValidBlockHeight),
    queuedAs: String(item.GSI1SK),
    ...(typeof item.searchBackoffSeconds === 'number' ? { searchBackoffSeconds: item.searchBackoffSeconds } : {}),
  }));
  return { due, ...(out.LastEvaluatedKey ? { next: out.LastEvaluatedKey } : {}) };
}

/**
 * A purchase the search could not reach back for waits `backoffSeconds` before it is due again: its
 * marker moves to that place in the queue, and records the wait (the next one doubles it). Only a
 * marker still standing and still where it was read (a second run that deferred it first wins; a
 * settled one is a tombstone out of the queue). False when it was not.
 */
export async function deferPurchaseSearch(pending: SignedPending, backoffSeconds: number, now: Date): Promise<boolean> {
  const dueAt = new Date(now.getTime() + backoffSeconds * 1000).toISOString();
  const result = await conditionalWrite(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.pendingCharge(pending.chargeId),
        UpdateExpression: 'SET GSI1SK = :sk, searchBackoffSeconds = :backoff, nextSearchAt = :dueAt',
        ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(settledAt) AND GSI1PK = :pk AND GSI1SK = :seen',
        ExpressionAttributeValues: {
          ':sk': keys.signedPurchaseIndex(dueAt, pending.chargeId).GSI1SK,
          ':backoff': backoffSeconds,
          ':dueAt': dueAt,
          ':pk': INDEX_PARTITIONS.signedPurchases.key,
          ':seen': pending.queuedAs,
        },
      },
    },
    () => outcome(false),
  );
  return result.committed;
}

/**
 * How many signed purchases still PENDING carry a backoff: past their blockhash, and no search has
 * yet reached back to where their transfer could be (due or not: the X402PurchasesUnsearched gauge).
 * Reads the whole queue once (a count, no items returned): the purchases it holds are the ones
 * waiting for the chain, a few minutes' worth unless some are buried.
 */
export async function countUnsearchedPurchases(): Promise<number> {
  let count = 0;
  let after: DueCursor | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        ...signedQueue(),
        KeyConditionExpression: 'GSI1PK = :pk',
        FilterExpression: 'attribute_exists(searchBackoffSeconds)',
        Select: 'COUNT',
        ...(after ? { ExclusiveStartKey: after } : {}),
      }),
    );
    count += out.Count ?? 0;
    after = out.LastEvaluatedKey;
  } while (after);
  return count;
}
