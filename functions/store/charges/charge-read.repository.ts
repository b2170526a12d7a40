/**
 * Reads of charges: one agent's charge, any charge by id (the agent its id names; GSI1 for older ids), an agent's charges newest first,
 * and a user's history across agents (GSI2), with the item → Charge parsing they share.
 *
 * An agent's charges are spread over CHARGE_SHARDS partitions by a hash of the id (store/table.ts),
 * plus the unsharded partition the charges written before that still sit in (the legacy one): a
 * charge by id is one GetItem where its id says (then the legacy key, only when not there), and a
 * page of the listing is ONE Query per partition, merged by id (ULIDs: newest first).
 */
import { GetCommand, QueryCommand, type QueryCommandInput, type QueryCommandOutput } from '@aws-sdk/lib-dynamodb';
import { encodeTime } from 'ulid';
import { config } from '../../config';
import type { Charge, ChargeStatus, PendingReason, SpendCounted } from '../../core/charges';
import { agentOfChargeId } from '../../core/ids';
import type { Currency } from '../../core/money';
import type { AcceptedRequirements, PurchaseTerms, SignedPurchase } from '../../core/purchases';
import { batchGetConsistent } from '../batch-get';
import { db } from '../client';
import { GSI1, GSI2, keys } from '../table';

/** The key of a charge's item: its shard, or the legacy partition it was read from. */
export function chargeKeyOf(charge: Pick<Charge, 'agentId' | 'id' | 'legacyPartition'>): { PK: string; SK: string } {
  return charge.legacyPartition ? keys.legacyCharge(charge.agentId, charge.id) : keys.charge(charge.agentId, charge.id);
}

/**
 * One agent's charge; undefined for an unknown id or another agent's charge. One strongly
 * consistent GetItem of its shard. An id that names its agent (`newChargeId`) is never anywhere
 * else, and one naming another agent is not read at all; an id of the earlier form may also sit in
 * the agent's unsharded partition, asked on a miss (an unknown id of that form costs two reads).
 */
export async function getCharge(agentId: string, chargeId: string): Promise<Charge | undefined> {
  const named = agentOfChargeId(chargeId);
  if (named !== undefined && named !== agentId) return undefined;
  const places =
    named === undefined ? [keys.charge(agentId, chargeId), keys.legacyCharge(agentId, chargeId)] : [keys.charge(agentId, chargeId)];
  for (const key of places) {
    const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: key, ConsistentRead: true }));
    if (out.Item) return toCharge(out.Item);
  }
  return undefined;
}

/**
 * Any agent's charge by id alone (admin and payer reads). An id that names its agent is one
 * strongly consistent GetItem (`getCharge`); one of the earlier form is found through its GSI1
 * entry (`keys.chargeIndex`), which only charges made before carry.
 */
export async function getChargeById(chargeId: string): Promise<Charge | undefined> {
  const agentId = agentOfChargeId(chargeId);
  if (agentId !== undefined) return getCharge(agentId, chargeId);
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
 * A page of an agent's charges, newest first, over all its partitions (`keys.chargePartitions`).
 * With `after` (a cursor) or on the first page: one strongly consistent Query per partition for
 * its newest `limit` charges (older than `after`), merged, the newest `limit` kept. Deeper by page
 * number (`skip`): one keys-only Query per partition for its newest `skip + limit` ids, merged,
 * the page's ids cut out, then one BatchGetItem of those. A partition can hold more than
 * `skip + limit` ids only when it has that many; so each sees all the ids that can fall on the page.
 */
export async function listCharges(agentId: string, opts: { limit: number; skip: number; after?: string }): Promise<ChargePage> {
  const partitions = keys.chargePartitions(agentId);
  if (opts.after !== undefined || opts.skip === 0) {
    const reads = await Promise.all(partitions.map((pk) => newestOf(pk, opts.limit, { after: opts.after, keysOnly: false })));
    const merged = mergeNewestFirst(reads.map((r) => r.items));
    const charges = merged.slice(0, opts.limit).map(toCharge);
    return { charges, lastId: moreAfter(reads, merged.length, opts.limit) ? charges[charges.length - 1]?.id : undefined };
  }
  const want = opts.skip + opts.limit;
  const reads = await Promise.all(partitions.map((pk) => newestOf(pk, want, { keysOnly: true })));
  const merged = mergeNewestFirst(reads.map((r) => r.items));
  const pageKeys = merged.slice(opts.skip, want).map((item) => ({ PK: item.PK, SK: item.SK }));
  if (pageKeys.length === 0) return { charges: [], lastId: undefined };
  const byId = new Map((await batchGetConsistent(pageKeys)).map((item) => [String(item.SK), item]));
  // Charges are never deleted: every id a Query just listed is there.
  const charges = pageKeys.flatMap((k) => {
    const item = byId.get(String(k.SK));
    return item ? [toCharge(item)] : [];
  });
  return { charges, lastId: moreAfter(reads, merged.length, want) ? charges[charges.length - 1]?.id : undefined };
}

type Item = Record<string, unknown>;

/** What one partition's read gave: its newest items, and whether it has more past them. */
interface PartitionRead {
  items: Item[];
  more: boolean;
}

/**
 * The newest `count` items of one partition (older than `after`), strongly consistent. One Query;
 * another only when DynamoDB's 1 MB a response cut it short of `count` (keys-only reads of deep
 * pages: the limit counts whole items, about 1,500 charges).
 */
async function newestOf(pk: string, count: number, opts: { after?: string | undefined; keysOnly: boolean }): Promise<PartitionRead> {
  const items: Item[] = [];
  let start: Item | undefined;
  let out: QueryCommandOutput;
  do {
    const input: QueryCommandInput = {
      TableName: config().TABLE_NAME,
      KeyConditionExpression: opts.after !== undefined ? 'PK = :pk AND SK < :after' : 'PK = :pk',
      ExpressionAttributeValues: { ':pk': pk, ...(opts.after !== undefined ? { ':after': opts.after } : {}) },
      ...(opts.keysOnly ? { ProjectionExpression: 'PK, SK' } : {}),
      ScanIndexForward: false,
      ConsistentRead: true,
      Limit: count - items.length,
      ...(start ? { ExclusiveStartKey: start } : {}),
    };
    out = await db().send(new QueryCommand(input));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start && items.length < count);
  return { items, more: start !== undefined };
}

/** Several partitions' items, each newest first, as one list newest first (ids are ULIDs: time order). */
function mergeNewestFirst(lists: Item[][]): Item[] {
  return lists.flat().sort((a, b) => (String(a.SK) < String(b.SK) ? 1 : String(a.SK) > String(b.SK) ? -1 : 0));
}

/** Whether charges may follow the first `upTo` merged ones: more were read, or a partition stopped at its count. */
const moreAfter = (reads: readonly PartitionRead[], merged: number, upTo: number): boolean => merged > upTo || reads.some((r) => r.more);

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
    ...optionalString(item, 'tabId'),
    ...(item.purchase !== null && typeof item.purchase === 'object'
      ? { purchase: toPurchaseTerms(item.purchase as Record<string, unknown>) }
      : {}),
    // Read from the agent's unsharded partition: its writes go back there (`chargeKeyOf`).
    ...(item.PK === keys.legacyChargePartition(String(item.agentId)) ? { legacyPartition: true as const } : {}),
  };
}

/** A purchase's terms as stored (written whole by this service: only its numbers need reading back). */
function toPurchaseTerms(p: Record<string, unknown>): PurchaseTerms {
  const signed = p.signed as (SignedPurchase & { lastValidBlockHeight: unknown }) | undefined;
  const requirements = p.requirements as AcceptedRequirements & { maxTimeoutSeconds: unknown };
  return {
    requirements: { ...requirements, maxTimeoutSeconds: Number(requirements.maxTimeoutSeconds) },
    resource: (p.resource as PurchaseTerms['resource']) ?? null,
    ...(signed ? { signed: { ...signed, lastValidBlockHeight: Number(signed.lastValidBlockHeight) } } : {}),
    ...(typeof p.transaction === 'string' ? { transaction: p.transaction } : {}),
  };
}

/** The `counted` record of an item, when it has a well-formed one (older items have none). */
export function optionalCounted(item: Record<string, unknown>): { counted?: SpendCounted } {
  const c = item.counted as Partial<SpendCounted> | undefined;
  if (c === null || typeof c !== 'object') return {};
  if (typeof c.day !== 'string' || typeof c.month !== 'string' || typeof c.agent !== 'boolean') return {};
  return { counted: { day: c.day, month: c.month, agent: c.agent, ...(typeof c.hour === 'string' ? { hour: c.hour } : {}) } };
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
  return { chargeId, key: { ...keys.userChargeIndex(userId, chargeId), ...chargeKeyOf(charge) } };
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
  opts: { limit: number; after?: UserChargePosition; status?: ChargeStatus; agentId?: string; currency?: Currency },
): Promise<ChargePage> {
  const pk = keys.userChargePartition(userId);
  // Filters run after each read (the console's Activity filters by agent and currency too).
  const filters = [
    ...(opts.status ? [['#status', ':status', 'status', opts.status]] : []),
    ...(opts.agentId ? [['#agentId', ':agentId', 'agentId', opts.agentId]] : []),
    ...(opts.currency ? [['#currency', ':currency', 'currency', opts.currency]] : []),
  ];
  const filter =
    filters.length > 0
      ? {
          FilterExpression: filters.map(([name, value]) => `${name} = ${value}`).join(' AND '),
          ExpressionAttributeNames: Object.fromEntries(filters.map(([name, , attribute]) => [name, attribute])),
        }
      : {};
  const filterValues = Object.fromEntries(filters.map(([, value, , given]) => [value, given]));
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
        ExpressionAttributeValues: { ':pk': pk, ...filterValues },
        ...filter,
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

/**
 * A user's charges made at or after `since`, newest first: one Query of GSI2's key range
 * `GSI2SK >= 'c' + the ULID time of since` (charge ids start with `c` and a ULID, so creation time
 * is their order). At most `limit` rows, in ONE request (DynamoDB may stop sooner at 1 MB): `more`
 * says the range was not read to its end, and the caller says its figures are partial.
 */
export async function listUserChargesSince(userId: string, since: Date, limit: number): Promise<{ charges: Charge[]; more: boolean }> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      IndexName: GSI2.indexName,
      KeyConditionExpression: 'GSI2PK = :pk AND GSI2SK >= :from',
      ExpressionAttributeValues: { ':pk': keys.userChargePartition(userId), ':from': `c${encodeTime(since.getTime(), 10).toLowerCase()}` },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return { charges: (out.Items ?? []).map(toCharge), more: out.LastEvaluatedKey !== undefined };
}
