/**
 * Reads of charges: one agent's charge, any charge by id (GSI1), an agent's charges newest first,
 * and a user's history across agents (GSI2), with the item → Charge parsing they share.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import type { Charge, ChargeStatus, PendingReason, SpendCounted } from '../core/charges';
import type { Currency } from '../core/money';
import { db } from './client';
import { GSI1, GSI2, keys } from './table';

/** One agent's charge; undefined for an unknown id or another agent's charge. */
export async function getCharge(agentId: string, chargeId: string): Promise<Charge | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: config().TABLE_NAME, Key: keys.charge(agentId, chargeId), ConsistentRead: true }),
  );
  return out.Item ? toCharge(out.Item) : undefined;
}

/** Any agent's charge by id (admin reads), through GSI1. */
export async function getChargeById(chargeId: string): Promise<Charge | undefined> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      IndexName: GSI1.indexName,
      KeyConditionExpression: 'GSI1PK = :pk',
      ExpressionAttributeValues: { ':pk': keys.chargeIndex(chargeId).GSI1PK },
      Limit: 1,
    }),
  );
  const item = out.Items?.[0];
  return item ? toCharge(item) : undefined;
}

export interface ChargePage {
  charges: Charge[];
  /** Id of the last charge returned when more may follow. */
  lastId: string | undefined;
}

/**
 * A page of an agent's charges, newest first. `after` continues from a cursor (one query).
 * Otherwise `skip` charges are passed over with keys-only queries, so a deep page reads only
 * keys of what it skips, never whole items.
 */
export async function listCharges(agentId: string, opts: { limit: number; skip: number; after?: string }): Promise<ChargePage> {
  const table = config().TABLE_NAME;
  const pk = keys.chargePartition(agentId);
  let start: Record<string, unknown> | undefined = opts.after ? { PK: pk, SK: opts.after } : undefined;
  let toSkip = opts.after ? 0 : opts.skip;
  while (toSkip > 0) {
    const out = await db().send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ProjectionExpression: 'PK, SK',
        ScanIndexForward: false,
        Limit: toSkip,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    toSkip -= out.Items?.length ?? 0;
    // No LastEvaluatedKey: the partition ended inside (or exactly at the end of) the skip.
    if (!out.LastEvaluatedKey) return { charges: [], lastId: undefined };
    start = out.LastEvaluatedKey;
  }
  const out = await db().send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      ScanIndexForward: false,
      ConsistentRead: true,
      Limit: opts.limit,
      ...(start ? { ExclusiveStartKey: start } : {}),
    }),
  );
  const charges = (out.Items ?? []).map(toCharge);
  const last = charges[charges.length - 1];
  return { charges, lastId: out.LastEvaluatedKey && last ? last.id : undefined };
}

export function toCharge(item: Record<string, unknown>): Charge {
  return {
    id: String(item.id),
    agentId: String(item.agentId),
    userId: String(item.userId),
    idempotencyKey: String(item.idempotencyKey),
    amount: Number(item.amount),
    currency: item.currency as Currency,
    description: String(item.description ?? ''),
    status: item.status as ChargeStatus,
    createdAt: String(item.createdAt),
    ...optionalString(item, 'agentName'),
    ...optionalString(item, 'failureReason'),
    ...(typeof item.pendingReason === 'string' ? { pendingReason: item.pendingReason as PendingReason } : {}),
    ...optionalString(item, 'expiresAt'),
    ...optionalNumber(item, 'holdSeconds'),
    ...optionalNumber(item, 'authorizedAmount'),
    ...optionalNumber(item, 'refundedAmount'),
    ...optionalCounted(item),
    ...optionalString(item, 'grantId'),
  };
}

/** The `counted` record of an item, when it has a well-formed one (older items have none). */
export function optionalCounted(item: Record<string, unknown>): { counted?: SpendCounted } {
  const c = item.counted as Partial<SpendCounted> | undefined;
  if (c === null || typeof c !== 'object') return {};
  if (typeof c.day !== 'string' || typeof c.month !== 'string' || typeof c.agent !== 'boolean') return {};
  return { counted: { day: c.day, month: c.month, agent: c.agent } };
}

const optionalNumber = <K extends string>(item: Record<string, unknown>, name: K) =>
  (typeof item[name] === 'number' ? { [name]: item[name] } : {}) as Partial<Record<K, number>>;

export const optionalString = <K extends string>(item: Record<string, unknown>, name: K) =>
  (typeof item[name] === 'string' ? { [name]: item[name] } : {}) as Partial<Record<K, string>>;

/**
 * With a status filter, one page of the user's history reads at most this many Query pages
 * (each of at most `limit + 1` items, so at most 303 items), then answers the matches it found,
 * possibly none, with a cursor: a sparse filter never reads the whole partition in one request.
 */
export const MAX_FILTERED_QUERIES = 3;

/** Where a page of a user's history continues: right after one of the user's own charges. */
export interface UserChargePosition {
  readonly chargeId: string;
  readonly key: Record<string, string>;
}

/**
 * The position after `chargeId` in `userId`'s history; undefined when no such charge is the
 * user's (a cursor from another payer's history, or naming nothing), so the caller refuses it
 * instead of handing DynamoDB a start key that is not of this index.
 */
export async function userChargePosition(userId: string, chargeId: string): Promise<UserChargePosition | undefined> {
  const charge = await getChargeById(chargeId);
  if (!charge || charge.userId !== userId) return undefined;
  return { chargeId, key: { ...keys.userChargeIndex(userId, chargeId), ...keys.charge(charge.agentId, chargeId) } };
}

/**
 * A page of a user's charges across agents, newest first (GSI2), optionally of one status;
 * `after` continues from a cursor. The index is eventually consistent: a charge a moment old may
 * be missing from it, and is in the next read. `lastId` is where the next page starts: the last
 * charge returned, or, when a filtered page was cut short by MAX_FILTERED_QUERIES, the last one
 * read (which did not match).
 */
export async function listUserCharges(
  userId: string,
  opts: { limit: number; after?: UserChargePosition; status?: ChargeStatus },
): Promise<ChargePage> {
  const pk = keys.userChargePartition(userId);
  const charges: Charge[] = [];
  let start: Record<string, unknown> | undefined = opts.after?.key;
  let queries = 0;
  // With a status filter, a page may take several reads: the filter runs after each read.
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: config().TABLE_NAME,
        IndexName: GSI2.indexName,
        KeyConditionExpression: 'GSI2PK = :pk',
        ExpressionAttributeValues: { ':pk': pk, ...(opts.status ? { ':status': opts.status } : {}) },
        ...(opts.status ? { FilterExpression: '#status = :status', ExpressionAttributeNames: { '#status': 'status' } } : {}),
        ScanIndexForward: false,
        Limit: opts.limit + 1 - charges.length,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    queries += 1;
    charges.push(...(out.Items ?? []).map(toCharge));
    start = out.LastEvaluatedKey;
  } while (start && charges.length <= opts.limit && queries < MAX_FILTERED_QUERIES);
  if (charges.length > opts.limit) {
    charges.length = opts.limit;
    return { charges, lastId: charges[charges.length - 1]?.id };
  }
  // The partition ended, or more may follow from the last item read.
  return { charges, lastId: start ? String(start.GSI2SK) : undefined };
}
