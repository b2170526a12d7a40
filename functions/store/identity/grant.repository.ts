/**
 * Grants (docs/grants.md). A payer's grants live in one partition (`GRANTS#<userId>`, sorted by
 * id = creation order), each item holding the grant's terms, its counters and what ends it; a
 * key item (`GRANTKEY#<hash>`) finds the grant from its key. The limit of MAX_ACTIVE_GRANTS active
 * grants is a condition on a counter item (`GRANTCOUNT#<userId>`), as the webhook endpoint limit
 * is: a create raises it under `count < max` in the create's own transaction, a revoke lowers it,
 * and so does reclaiming an expired grant. A grant counts while its item says `counted = true`;
 * exactly one transaction turns that off (revoke or reclaim), so the counter is never lowered twice.
 * The item's attributes are read and written in grant.mapper.ts.
 */
import { GetCommand, QueryCommand, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import { DomainError, UserKeyRevokedError } from '../../core/errors';
import type { OutboxEvent } from '../../core/events';
import { type Grant, type GrantStatus, MAX_ACTIVE_GRANTS } from '../../core/grants';
import { Refusal, refuse } from '../../messages/refusal';
import { db } from '../client';
import { outboxPut } from '../events/outbox';
import { keys } from '../table';
import { ConditionFailedError, named, type OldItem, PRECEDENCE, type Precedence, type TransactItem, transactWrite } from '../transact';
import { grantItem, toGrant } from './grant.mapper';
import { accountKeyCheck } from './user.repository';

/** The payer already has MAX_ACTIVE_GRANTS active grants. */
export class GrantLimitError extends Refusal<'grantLimit'> {
  constructor() {
    super('grantLimit', [MAX_ACTIVE_GRANTS]);
  }
}

/** Another transaction changed the grant between the read and the write: read again. */
class GrantChangedError extends DomainError {
  constructor() {
    super('grant changed');
    this.name = 'GrantChangedError';
  }
}

/** An item a caller adds to the create's transaction, with the error its failed condition means. */
export interface ConditionedItem {
  item: TransactItem;
  /** The error its failed condition means, given the item as it was (DynamoDB's old item, when it returned one). */
  refusal: (old?: OldItem) => Error;
  /** Which refusal speaks when several failed (an idempotency record's replay outranks the rest). */
  precedence?: Precedence;
}

/** Writes `transaction`'s items in one TransactWriteItems; a failed condition comes out as the error its item carries. */
async function commit(transaction: readonly ConditionedItem[]): Promise<void> {
  await transactWrite(
    transaction.map((t) =>
      named(t.item, { onConditionFailed: (old) => t.refusal(old), ...(t.precedence !== undefined ? { precedence: t.precedence } : {}) }),
    ),
  );
}

const NOT_CONDITIONED = () => new Error('unconditioned item refused');

/**
 * Creates a grant, its key item and its events, and counts it against the payer's limit, in one
 * transaction with `also` (the consent page's request update). GrantLimitError at the limit: the
 * caller may reclaim expired grants (`reclaimExpiredGrants`) and try once more. The transaction is
 * conditioned on `accountKeyHash` still being the payer's account key (UserKeyRevokedError once it
 * was rotated away): a rotation ends every grant there is (docs/grants.md), and no container that
 * still has the old key cached can make a new one after it.
 */
export async function createGrant(
  grant: Grant,
  keyHash: string,
  opts: { accountKeyHash: string; events: readonly OutboxEvent[]; now: Date; also?: readonly ConditionedItem[] },
): Promise<void> {
  const table = config().TABLE_NAME;
  const transaction: ConditionedItem[] = [
    // Before a replay: a grant key is never handed again to a key that has been rotated away.
    {
      item: accountKeyCheck(grant.userId, opts.accountKeyHash),
      refusal: () => new UserKeyRevokedError(),
      precedence: PRECEDENCE.credential,
    },
    {
      item: {
        Update: {
          TableName: table,
          Key: keys.grantCount(grant.userId),
          UpdateExpression: 'SET #count = if_not_exists(#count, :zero) + :one, #type = :type',
          // The limit, enforced by the item every create, revoke and reclaim of this payer goes through.
          ConditionExpression: 'attribute_not_exists(#count) OR #count < :max',
          ExpressionAttributeNames: { '#count': 'count', '#type': 'type' },
          ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':max': MAX_ACTIVE_GRANTS, ':type': 'GrantCount' },
        },
      },
      refusal: () => new GrantLimitError(),
    },
    {
      item: {
        Put: {
          TableName: table,
          Item: { ...keys.grant(grant.userId, grant.id), ...grantItem(grant), keyHash, counted: true },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      refusal: () => new Error(`grant ${grant.id} exists`),
    },
    {
      item: {
        Put: {
          TableName: table,
          // What a charge with the key needs to build its one transaction without reading the grant:
          // the terms, which never change. Status and counters are conditioned on the grant item.
          Item: {
            ...keys.grantKey(keyHash),
            type: 'GrantKey',
            grantId: grant.id,
            userId: grant.userId,
            agentId: grant.agentId,
            currency: grant.currency,
            limits: grant.limits,
            ...(grant.approvalAbove !== undefined ? { approvalAbove: grant.approvalAbove } : {}),
            ...(grant.scope !== undefined ? { scope: grant.scope } : {}),
            ...(grant.expiresAt !== undefined ? { expiresAt: grant.expiresAt } : {}),
          },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      refusal: () => new Error('grant key exists'),
    },
    ...(opts.also ?? []),
  ];
  const outbox = outboxPut(opts.events, opts.now);
  if (outbox) transaction.push({ item: outbox, refusal: NOT_CONDITIONED });
  await commit(transaction);
}

/**
 * Stops counting the payer's expired grants against the limit (each in its own small transaction,
 * conditioned on it still counting and being expired, so a racing revoke or reclaim lowers the
 * counter once). Returns how many were reclaimed.
 */
export async function reclaimExpiredGrants(userId: string, now: Date): Promise<number> {
  const table = config().TABLE_NAME;
  let reclaimed = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const out: QueryCommandOutput = await db().send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'PK = :pk',
        FilterExpression: 'counted = :yes AND attribute_not_exists(revokedAt) AND expiresAt <= :now',
        ExpressionAttributeValues: { ':pk': keys.grantPartition(userId), ':yes': true, ':now': now.toISOString() },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of out.Items ?? []) {
      try {
        await transactWrite([
          uncount(userId, String(item.grantId), 'expiresAt <= :now', { ':now': now.toISOString() }),
          lowerCount(userId),
        ]);
        reclaimed++;
      } catch (error) {
        // Revoked or reclaimed meanwhile: that transaction lowered the counter.
        if (!(error instanceof ConditionFailedError)) throw error;
      }
    }
    start = out.LastEvaluatedKey;
  } while (start);
  return reclaimed;
}

/** The grant item's Update that stops it counting, under `extra` (which may SET more). */
function uncount(userId: string, grantId: string, condition: string, values: Record<string, unknown>, set: string[] = []): TransactItem {
  return {
    Update: {
      TableName: config().TABLE_NAME,
      Key: keys.grant(userId, grantId),
      UpdateExpression: `SET ${['counted = :no', ...set].join(', ')}`,
      ConditionExpression: `attribute_exists(PK) AND counted = :yes AND ${condition}`,
      ExpressionAttributeValues: { ':no': false, ':yes': true, ...values },
    },
  };
}

function lowerCount(userId: string): TransactItem {
  return {
    Update: {
      TableName: config().TABLE_NAME,
      Key: keys.grantCount(userId),
      UpdateExpression: 'SET #count = #count - :one',
      // Never below zero, even if the counter were somehow behind.
      ConditionExpression: '#count > :zero',
      ExpressionAttributeNames: { '#count': 'count' },
      ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
    },
  };
}

/** One of the payer's grants, read strongly consistent; undefined for an unknown id or another payer's. */
export async function getGrant(userId: string, grantId: string): Promise<Grant | undefined> {
  return (await readGrantItem(userId, grantId))?.grant;
}

async function readGrantItem(userId: string, grantId: string): Promise<{ grant: Grant; counted: boolean } | undefined> {
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.grant(userId, grantId), ConsistentRead: true }));
  return out.Item ? { grant: toGrant(out.Item), counted: out.Item.counted === true } : undefined;
}

/**
 * Revokes one of the payer's grants: `revokedAt` set once (a revoked grant is answered as it is),
 * the counter lowered if it still counted, and `events` written, in one transaction. Every charge
 * with its key is conditioned on `revokedAt` being absent, so it stops at once. Undefined for an
 * unknown grant or another payer's.
 */
export async function revokeGrant(
  userId: string,
  grantId: string,
  now: Date,
  events: (grant: Grant) => readonly OutboxEvent[],
): Promise<Grant | undefined> {
  for (let round = 0; round < 5; round++) {
    const found = await readGrantItem(userId, grantId);
    if (!found) return undefined;
    if (found.grant.revokedAt !== undefined) return found.grant;
    const revoked: Grant = { ...found.grant, revokedAt: now.toISOString() };
    const transaction: ConditionedItem[] = found.counted
      ? [
          {
            item: uncount(userId, grantId, 'attribute_not_exists(revokedAt)', { ':at': revoked.revokedAt }, ['revokedAt = :at']),
            refusal: () => new GrantChangedError(),
          },
          { item: lowerCount(userId), refusal: () => new GrantChangedError() },
        ]
      : [
          {
            item: {
              Update: {
                TableName: config().TABLE_NAME,
                Key: keys.grant(userId, grantId),
                UpdateExpression: 'SET revokedAt = :at',
                // Reclaimed (expired) already: only the revocation to record.
                ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(revokedAt) AND counted = :no',
                ExpressionAttributeValues: { ':at': revoked.revokedAt, ':no': false },
              },
            },
            refusal: () => new GrantChangedError(),
          },
        ];
    const outbox = outboxPut(events(revoked), now);
    if (outbox) transaction.push({ item: outbox, refusal: NOT_CONDITIONED });
    try {
      await commit(transaction);
      return revoked;
    } catch (error) {
      if (!(error instanceof GrantChangedError)) throw error;
    }
  }
  throw refuse('grantChanging');
}

/** The filter each status stands for: status is computed from `revokedAt` and `expiresAt` at `now`. */
const STATUS_FILTERS: Readonly<Record<GrantStatus, string>> = {
  active: 'attribute_not_exists(revokedAt) AND (attribute_not_exists(expiresAt) OR expiresAt > :now)',
  revoked: 'attribute_exists(revokedAt)',
  expired: 'attribute_not_exists(revokedAt) AND expiresAt <= :now',
};

/** Queries one filtered page reads at most (a page with `status` may hold fewer grants than asked). */
const MAX_FILTERED_QUERIES = 5;

/**
 * The payer's grants, newest first: at most `limit`, after the grant `after` (a cursor's), of one
 * status when given. `lastId` is where the next page starts; undefined on the last.
 */
export async function listGrants(
  userId: string,
  opts: { limit: number; after?: string; status?: GrantStatus; now: Date },
): Promise<{ grants: Grant[]; lastId?: string }> {
  const grants: Grant[] = [];
  let start: Record<string, unknown> | undefined = opts.after ? keys.grant(userId, opts.after) : undefined;
  for (let query = 0; query < (opts.status ? MAX_FILTERED_QUERIES : 1); query++) {
    const out: QueryCommandOutput = await db().send(
      new QueryCommand({
        TableName: config().TABLE_NAME,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: {
          ':pk': keys.grantPartition(userId),
          ...(opts.status && STATUS_FILTERS[opts.status].includes(':now') ? { ':now': opts.now.toISOString() } : {}),
        },
        ...(opts.status ? { FilterExpression: STATUS_FILTERS[opts.status] } : {}),
        ScanIndexForward: false,
        Limit: opts.status ? Math.max(opts.limit, 50) : opts.limit,
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of out.Items ?? []) {
      grants.push(toGrant(item));
      if (grants.length === opts.limit) {
        const more = item !== out.Items?.at(-1) || out.LastEvaluatedKey !== undefined;
        return { grants, ...(more ? { lastId: String(item.grantId) } : {}) };
      }
    }
    start = out.LastEvaluatedKey;
    if (!start) return { grants };
  }
  return { grants, ...(start ? { lastId: String(start.SK) } : {}) };
}
