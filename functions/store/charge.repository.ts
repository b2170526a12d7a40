/**
 * Charges. A charge is ONE TransactWriteItems:
 *   0. the user's item: balance debited (or moved to held for a PENDING charge), spend counters
 *      raised, all conditioned on the basis it was judged by (store/payer.ts),
 *   1. one shard of the agent's earned balance credited (nothing while PENDING) and its charge
 *      count bumped,
 *   2. the charge written,
 *   3. the idempotency record written,
 *   4. the kill switch: a condition that the agent item is still enabled for this key,
 *   5. (PENDING only) the pending marker: how approve/decline find it and the sweeper expires it.
 * A refused charge keeps a FAILED record with its reason, written with its idempotency record.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import type { Charge, ChargeStatus, PendingReason } from '../core/charges';
import { AgentDisabledError, BalanceLimitError, ChargeNotPendingError, PayerStateChangedError, StaleReadError } from '../core/errors';
import type { IdempotencyWrite } from '../core/idempotency';
import type { Currency } from '../core/money';
import type { PayerState } from '../core/users';
import { agentCheckFailed, agentEnabledCheck } from './agent.repository';
import { randomShard, shardCredit } from './balance.repository';
import { db } from './client';
import { idempotencyPut, recordExists } from './idempotency.repository';
import { readMinor } from './numbers';
import {
  ASSUME_COUNTED,
  type ChargeBasis,
  chargeRefusal,
  chargeUserUpdate,
  payerStateOf,
  type ReleaseBasis,
  releaseBasis,
  releaseUserUpdate,
} from './payer';
import { GSI1, GSI2, keys } from './table';
import { ConditionFailedError, type TransactItem, transactWrite } from './transact';

const USER_ITEM = 0;
const AGENT_SHARD = 1;
const IDEMPOTENCY = 3;
const AGENT_CHECK = 4;
const FAILED_IDEMPOTENCY = 2;
const FAILED_AGENT_CHECK = 3;
const FAILED_POLICY_CHECK = 4;

/** GSI1 partition of the pending markers, sorted by `<expiresAt>#<chargeId>`: the sweeper's queue. */
export const PENDING_EXPIRY_PK = 'PENDING_EXPIRY';

/**
 * Commits a charge: SUCCESS, or PENDING (the amount held) when `basis.hold`. Conditioned on the
 * agent item of `agentKeyHash` being enabled and on the payer's basis. Throws, in this order of
 * precedence: IdempotencyRecordExistsError (a replay wins: the first request's answer is the
 * answer), AgentDisabledError, then what the user's item says (UserKeyRevokedError,
 * PayerStateChangedError to retry, SpendingLimitError, InsufficientFundsError), or
 * BalanceLimitError when the agent's shard is at its cap.
 */
export async function commitCharge(
  charge: Charge,
  agentKeyHash: string,
  basis: ChargeBasis,
  idem: IdempotencyWrite,
  now: Date,
): Promise<void> {
  const table = config().TABLE_NAME;
  const items: TransactItem[] = [
    {
      Update: {
        TableName: table,
        Key: keys.user(charge.userId),
        ...chargeUserUpdate(charge.agentId, charge.currency, charge.amount, basis, now),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    // A PENDING charge is counted in the list's total now; its money reaches the agent on approval.
    shardCredit(charge.agentId, randomShard(), charge.currency, basis.hold ? 0 : charge.amount, true),
    chargePut(charge),
    idempotencyPut(idem, now),
    agentEnabledCheck(agentKeyHash),
  ];
  if (basis.hold) items.push(pendingMarkerPut(charge));
  try {
    await transactWrite(items);
  } catch (error) {
    const exists = recordExists(error, IDEMPOTENCY, now);
    if (exists) throw exists;
    if (agentCheckFailed(error, AGENT_CHECK)) throw new AgentDisabledError();
    if (error instanceof ConditionFailedError && error.failed.includes(USER_ITEM)) {
      throw chargeRefusal(error.oldItems.get(USER_ITEM), charge.agentId, charge.currency, charge.amount, basis, now);
    }
    if (error instanceof ConditionFailedError && error.failed.includes(AGENT_SHARD)) throw new BalanceLimitError();
    throw error;
  }
}

/**
 * Keeps a FAILED charge (refused: its `failureReason` says why) with its idempotency record; moves
 * no money. The shard write only counts the charge, so the list's `total` includes refusals.
 * A refusal by the payer's policy (`policyJudged`) is conditioned on that policy still being the
 * user's: judged under a stale copy, it throws PayerStateChangedError and is judged again.
 */
export async function recordFailedCharge(
  charge: Charge,
  agentKeyHash: string,
  idem: IdempotencyWrite,
  now: Date,
  policyJudged?: PayerState,
): Promise<void> {
  const items: TransactItem[] = [
    shardCredit(charge.agentId, randomShard(), charge.currency, 0, true),
    chargePut(charge),
    idempotencyPut(idem, now),
    agentEnabledCheck(agentKeyHash),
  ];
  if (policyJudged) {
    items.push({
      ConditionCheck: {
        TableName: config().TABLE_NAME,
        Key: keys.user(charge.userId),
        ConditionExpression:
          policyJudged.policyVersion === 0 ? 'attribute_not_exists(policyVersion) OR policyVersion = :v' : 'policyVersion = :v',
        ExpressionAttributeValues: { ':v': policyJudged.policyVersion },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    });
  }
  try {
    await transactWrite(items);
  } catch (error) {
    const exists = recordExists(error, FAILED_IDEMPOTENCY, now);
    if (exists) throw exists;
    if (agentCheckFailed(error, FAILED_AGENT_CHECK)) throw new AgentDisabledError();
    if (error instanceof ConditionFailedError && error.failed.includes(FAILED_POLICY_CHECK)) {
      throw new PayerStateChangedError(payerStateOf(error.oldItems.get(FAILED_POLICY_CHECK) ?? {}));
    }
    throw error;
  }
}

/** What approve, decline and the sweeper know of a PENDING charge from its marker. */
export interface PendingCharge {
  chargeId: string;
  agentId: string;
  userId: string;
  amount: number;
  currency: Currency;
  createdAt: string;
  expiresAt: string;
  pendingReason: PendingReason;
}

function pendingMarkerPut(charge: Charge): TransactItem {
  if (!charge.expiresAt || !charge.pendingReason) throw new Error('a PENDING charge needs expiresAt and pendingReason');
  const marker: PendingCharge = {
    chargeId: charge.id,
    agentId: charge.agentId,
    userId: charge.userId,
    amount: charge.amount,
    currency: charge.currency,
    createdAt: charge.createdAt,
    expiresAt: charge.expiresAt,
    pendingReason: charge.pendingReason,
  };
  return {
    Put: {
      TableName: config().TABLE_NAME,
      Item: {
        ...keys.pendingCharge(charge.id),
        GSI1PK: PENDING_EXPIRY_PK,
        GSI1SK: `${charge.expiresAt}#${charge.id}`,
        type: 'PendingCharge',
        ...marker,
      },
      ConditionExpression: 'attribute_not_exists(PK)',
    },
  };
}

/** A PENDING charge's marker (strongly consistent); undefined once it is no longer PENDING. */
export async function getPendingCharge(chargeId: string): Promise<PendingCharge | undefined> {
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.pendingCharge(chargeId), ConsistentRead: true }));
  return out.Item ? toPendingCharge(out.Item) : undefined;
}

function toPendingCharge(item: Record<string, unknown>): PendingCharge {
  return {
    chargeId: String(item.chargeId),
    agentId: String(item.agentId),
    userId: String(item.userId),
    amount: readMinor(item, 'amount'),
    currency: item.currency as Currency,
    createdAt: String(item.createdAt),
    expiresAt: String(item.expiresAt),
    pendingReason: item.pendingReason as PendingReason,
  };
}

/**
 * PENDING charges whose `expiresAt` is before `before`, oldest first, as the index shows their
 * markers (whole items: no read per charge). The index is eventually consistent: one already
 * settled may still be listed, and its settlement's condition refuses it.
 */
export async function listDuePending(before: Date, limit: number): Promise<PendingCharge[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      IndexName: GSI1.indexName,
      KeyConditionExpression: 'GSI1PK = :pk AND GSI1SK < :before',
      ExpressionAttributeValues: { ':pk': PENDING_EXPIRY_PK, ':before': before.toISOString() },
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map(toPendingCharge);
}

/** How a PENDING charge ends. */
export type Settlement =
  /** Approved: SUCCESS, the held amount to the agent. */
  | { kind: 'approve' }
  /** Declined, released or expired: the hold back to the user. */
  | { kind: 'return'; status: 'FAILED' | 'EXPIRED'; failureReason: string | null };

/**
 * Ends a PENDING charge in one transaction: the charge's new state (conditioned on still PENDING
 * and, unless it expires, not past `expiresAt`), the user's held money (to the agent's shard on
 * approval, back to the balance otherwise, lowering the spend counters that counted it), and the
 * marker deleted. Throws ChargeNotPendingError (with the status it has now) when it moved on or
 * expired first. Returns the charge as it is after.
 */
export async function settlePending(pending: PendingCharge, settlement: Settlement, now: Date): Promise<Charge>;
/** The same without reading the charge back (the sweeper needs no answer). */
export async function settlePending(pending: PendingCharge, settlement: Settlement, now: Date, readBack: false): Promise<undefined>;
export async function settlePending(
  pending: PendingCharge,
  settlement: Settlement,
  now: Date,
  readBack = true,
): Promise<Charge | undefined> {
  let basis: ReleaseBasis = ASSUME_COUNTED;
  // Two rounds at most: the second with the spend periods the user's item showed.
  for (let round = 0; round < 2; round++) {
    try {
      await settleOnce(pending, settlement, basis, now);
      if (!readBack) return;
      const after = await getCharge(pending.agentId, pending.chargeId);
      if (!after) throw new Error(`charge ${pending.chargeId} vanished after settling`);
      return after;
    } catch (error) {
      if (error instanceof ConditionFailedError && error.failed.includes(0)) {
        const old = error.oldItems.get(0);
        const status = (old?.status as ChargeStatus | undefined) ?? 'FAILED';
        // Still PENDING but past expiresAt: report it as expired, whatever the sweeper has done yet.
        throw new ChargeNotPendingError(status === 'PENDING' ? 'EXPIRED' : status);
      }
      if (error instanceof ConditionFailedError && error.failed.includes(1) && settlement.kind === 'return') {
        const old = error.oldItems.get(1);
        if (!old) throw error;
        basis = releaseBasis(old, pending);
        continue;
      }
      throw error;
    }
  }
  throw new StaleReadError('user spend counters');
}

async function settleOnce(pending: PendingCharge, settlement: Settlement, basis: ReleaseBasis, now: Date): Promise<void> {
  const table = config().TABLE_NAME;
  const chargeKey = keys.charge(pending.agentId, pending.chargeId);
  const nowIso = now.toISOString();
  const approving = settlement.kind === 'approve';
  const status: ChargeStatus = approving ? 'SUCCESS' : settlement.status;
  const chargeUpdate: TransactItem = {
    Update: {
      TableName: table,
      Key: chargeKey,
      UpdateExpression: `SET #status = :status, settledAt = :now${
        !approving && settlement.failureReason ? ', failureReason = :reason' : ''
      } REMOVE pendingReason`,
      // An expiry happens only once due; approve and decline only before it.
      ConditionExpression: `#status = :pending AND expiresAt ${status === 'EXPIRED' ? '<=' : '>'} :now`,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':status': status,
        ':pending': 'PENDING',
        ':now': nowIso,
        ...(!approving && settlement.failureReason ? { ':reason': settlement.failureReason } : {}),
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
  const userUpdate: TransactItem = approving
    ? {
        Update: {
          TableName: table,
          Key: keys.user(pending.userId),
          UpdateExpression: 'ADD #held :neg',
          ConditionExpression: '#held >= :amount',
          ExpressionAttributeNames: { '#held': `held${pending.currency}` },
          ExpressionAttributeValues: { ':neg': -pending.amount, ':amount': pending.amount },
        },
      }
    : {
        Update: {
          TableName: table,
          Key: keys.user(pending.userId),
          ...releaseUserUpdate(pending, basis),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      };
  const items: TransactItem[] = [
    chargeUpdate,
    userUpdate,
    { Delete: { TableName: table, Key: keys.pendingCharge(pending.chargeId), ConditionExpression: 'attribute_exists(PK)' } },
  ];
  if (approving) items.push(shardCredit(pending.agentId, randomShard(), pending.currency, pending.amount, false));
  await transactWrite(items);
}

function chargePut(charge: Charge): TransactItem {
  return {
    Put: {
      TableName: config().TABLE_NAME,
      Item: {
        ...keys.charge(charge.agentId, charge.id),
        ...keys.chargeIndex(charge.id),
        ...keys.userChargeIndex(charge.userId, charge.id),
        type: 'Charge',
        ...charge,
      },
      ConditionExpression: 'attribute_not_exists(PK)',
    },
  };
}

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
  };
}

const optionalString = <K extends string>(item: Record<string, unknown>, name: K) =>
  (typeof item[name] === 'string' ? { [name]: item[name] } : {}) as Partial<Record<K, string>>;

/**
 * A page of a user's charges across agents, newest first (GSI2), optionally of one status;
 * `after` continues from a cursor. The index is eventually consistent: a charge a moment old may
 * be missing from it, and is in the next read.
 */
export async function listUserCharges(userId: string, opts: { limit: number; after?: string; status?: ChargeStatus }): Promise<ChargePage> {
  const pk = keys.userChargePartition(userId);
  const charges: Charge[] = [];
  let start: Record<string, unknown> | undefined = opts.after
    ? { GSI2PK: pk, GSI2SK: opts.after, ...(await chargeKeyById(userId, opts.after)) }
    : undefined;
  let more = false;
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
    charges.push(...(out.Items ?? []).map(toCharge));
    start = out.LastEvaluatedKey;
  } while (start && charges.length <= opts.limit);
  if (charges.length > opts.limit) {
    charges.length = opts.limit;
    more = true;
  } else more = start !== undefined;
  const last = charges[charges.length - 1];
  return { charges, lastId: more && last ? last.id : undefined };
}

/** The base-table key of a user's charge, for continuing the index after it. */
async function chargeKeyById(userId: string, chargeId: string): Promise<{ PK: string; SK: string } | Record<string, never>> {
  const charge = await getChargeById(chargeId);
  return charge && charge.userId === userId ? keys.charge(charge.agentId, chargeId) : {};
}
