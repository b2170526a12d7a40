/**
 * Charges. A charge is ONE TransactWriteItems:
 *   - the user's item: balance debited (or moved to held for a PENDING charge), spend counters
 *     raised, all conditioned on the basis it was judged by (store/payer.ts),
 *   - one shard of the agent's earned balance credited (nothing while PENDING) and its charge
 *     count bumped,
 *   - the charge written,
 *   - the idempotency record written,
 *   - the kill switch: a condition that the agent item is still enabled for this key,
 *   - (PENDING only) the pending marker: how approve/decline find it and the sweeper expires it,
 *   - (a grant key's charge) the grant item's counters and status (store/grant-charge.ts),
 *   - the outbox item with the charge's webhook events (store/outbox.ts), when it has any.
 * A refused charge keeps a FAILED record with its reason, written with its idempotency record.
 * Each item carries what its failed condition means (store/transact.ts `named`), so the order of
 * the items says nothing.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { type Charge, type ChargeStatus, countedOf, type PendingReason, type SpendCounted } from '../core/charges';
import { ChargeAwaitsApprovalError, ChargeNotPendingError, PayerStateChangedError, StaleReadError } from '../core/errors';
import type { OutboxEvent } from '../core/events';
import type { IdempotencyWrite } from '../core/idempotency';
import type { Currency } from '../core/money';
import type { PayerState } from '../core/users';
import { agentEnabledCheck } from './agent.repository';
import { randomShard, shardCredit } from './balance.repository';
import { db } from './client';
import {
  assumeGrantCounted,
  type GrantCharge,
  type GrantReturnBasis,
  grantChargeItem,
  grantReturnBasis,
  grantSettleItem,
} from './grant-charge';
import { idempotencyPut } from './idempotency.repository';
import { readMinor } from './numbers';
import { withOutbox } from './outbox';
import {
  assumeCounted,
  type ChargeBasis,
  chargeRefusal,
  chargeUserUpdate,
  countedBy,
  payerStateOf,
  type ReleaseBasis,
  releaseBasis,
  releaseUserUpdate,
} from './payer';
import { GSI1, GSI2, INDEX_PARTITIONS, keys } from './table';
import { named, type OldItem, outcome, type TransactEntry, type TransactItem, transactWrite } from './transact';

/** GSI1 partition of the pending markers, sorted by `<expiresAt>#<chargeId>`: the sweeper's queue. */
export const PENDING_EXPIRY_PK = INDEX_PARTITIONS.pendingExpiry.key;

/**
 * Commits a charge: SUCCESS, or PENDING (the amount held) when `basis.hold`. Conditioned on the
 * agent item of `agentKeyHash` being enabled and on the payer's basis. Throws, in this order of
 * precedence: IdempotencyRecordExistsError (a replay wins: the first request's answer is the
 * answer), AgentDisabledError, then what the user's item says (UserKeyRevokedError,
 * PayerStateChangedError to retry, SpendingLimitError, InsufficientFundsError), or
 * BalanceLimitError when the agent's shard is at its cap. `events` (use-cases/events.ts) are
 * written in the same transaction, last. The charge and its marker keep which counters it was
 * added to (`Charge.counted`), for whatever gives its hold back.
 */
export async function commitCharge(
  made: Charge,
  agentKeyHash: string,
  basis: ChargeBasis & { grant?: GrantCharge | undefined },
  idem: IdempotencyWrite,
  now: Date,
  events: readonly OutboxEvent[] = [],
): Promise<void> {
  const table = config().TABLE_NAME;
  const charge: Charge = { ...made, counted: countedBy(basis, now) };
  const items: TransactEntry[] = [
    named(
      {
        Update: {
          TableName: table,
          Key: keys.user(charge.userId),
          ...chargeUserUpdate(charge.agentId, charge.currency, charge.amount, basis, now),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      // What the user's item says (revoked key, stale basis, limit, funds), before the shard's cap.
      { onConditionFailed: (old) => chargeRefusal(old, charge.agentId, charge.currency, charge.amount, basis, now), precedence: 1 },
    ),
    // A PENDING charge is counted in the list's total now; its money reaches the agent on approval.
    shardCredit(charge.agentId, randomShard(), charge.currency, basis.hold ? 0 : charge.amount, { countsCharge: true }),
    chargePut(charge),
    idempotencyPut(idem, now),
    agentEnabledCheck(agentKeyHash),
  ];
  if (basis.hold) items.push(pendingMarkerPut(charge));
  if (basis.grant) items.push(grantChargeItem(charge, basis.grant, now));
  await transactWrite(withOutbox(items, events, now));
}

/** What goes with a refused charge's record. */
export interface FailedChargeOptions {
  /**
   * The payer's state a refusal by the payer's policy was judged under: the record is then
   * conditioned on that policy still being the user's (PayerStateChangedError otherwise).
   */
  policyJudged?: PayerState | undefined;
  /** charge.failed, written in the same transaction, last. */
  events?: readonly OutboxEvent[];
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
  opts: FailedChargeOptions = {},
): Promise<void> {
  const { policyJudged, events = [] } = opts;
  const items: TransactEntry[] = [
    shardCredit(charge.agentId, randomShard(), charge.currency, 0, { countsCharge: true }),
    chargePut(charge),
    idempotencyPut(idem, now),
    agentEnabledCheck(agentKeyHash),
  ];
  if (policyJudged) {
    items.push(
      named(
        {
          ConditionCheck: {
            TableName: config().TABLE_NAME,
            Key: keys.user(charge.userId),
            ConditionExpression:
              policyJudged.policyVersion === 0 ? 'attribute_not_exists(policyVersion) OR policyVersion = :v' : 'policyVersion = :v',
            ExpressionAttributeValues: { ':v': policyJudged.policyVersion },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        { onConditionFailed: (old) => new PayerStateChangedError(payerStateOf(old ?? {})), precedence: 1 },
      ),
    );
  }
  await transactWrite(withOutbox(items, events, now));
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
  /** Holds (authorize-then-capture): the capture window once approved, in seconds. */
  holdSeconds?: number;
  /**
   * The rest of the charge, so a settlement can render its webhook events without reading the
   * charge (`chargeOfPending`). Absent on markers written before the events were wired.
   */
  idempotencyKey?: string;
  description?: string;
  agentName?: string;
  /** The spend counters that counted it; absent on markers written before they were recorded (`countedOf`). */
  counted?: SpendCounted;
  /** The grant it was made under: a settlement gives what goes back to the grant's counters too. */
  grantId?: string;
}

/** The pending view of a PENDING charge read from its own item (capture and release start there). */
export function pendingOf(charge: Charge): PendingCharge {
  if (charge.status !== 'PENDING' || !charge.expiresAt || !charge.pendingReason) throw new Error(`charge ${charge.id} is not PENDING`);
  return {
    chargeId: charge.id,
    agentId: charge.agentId,
    userId: charge.userId,
    amount: charge.amount,
    currency: charge.currency,
    createdAt: charge.createdAt,
    expiresAt: charge.expiresAt,
    pendingReason: charge.pendingReason,
    ...(charge.holdSeconds !== undefined ? { holdSeconds: charge.holdSeconds } : {}),
    idempotencyKey: charge.idempotencyKey,
    description: charge.description,
    ...(charge.agentName !== undefined ? { agentName: charge.agentName } : {}),
    ...(charge.counted !== undefined ? { counted: charge.counted } : {}),
    ...(charge.grantId !== undefined ? { grantId: charge.grantId } : {}),
  };
}

/**
 * The PENDING charge a marker stands for, as the charge item holds it (refunds are impossible
 * while PENDING); undefined for a marker written before it carried the whole charge.
 */
export function chargeOfPending(pending: PendingCharge): Charge | undefined {
  if (pending.idempotencyKey === undefined || pending.description === undefined) return undefined;
  return {
    id: pending.chargeId,
    agentId: pending.agentId,
    userId: pending.userId,
    idempotencyKey: pending.idempotencyKey,
    amount: pending.amount,
    currency: pending.currency,
    description: pending.description,
    status: 'PENDING',
    createdAt: pending.createdAt,
    ...(pending.agentName !== undefined ? { agentName: pending.agentName } : {}),
    pendingReason: pending.pendingReason,
    expiresAt: pending.expiresAt,
    ...(pending.holdSeconds !== undefined ? { holdSeconds: pending.holdSeconds, authorizedAmount: pending.amount } : {}),
    ...(pending.counted !== undefined ? { counted: pending.counted } : {}),
    ...(pending.grantId !== undefined ? { grantId: pending.grantId } : {}),
  };
}

/** The PENDING charge behind a marker: from the marker itself, or (an older marker) read. */
export async function chargeBeforeSettling(pending: PendingCharge): Promise<Charge | undefined> {
  return chargeOfPending(pending) ?? (await getCharge(pending.agentId, pending.chargeId));
}

/**
 * The charge as a settlement leaves it (what `settleItems` writes), for its webhook events and
 * answers: approve → SUCCESS (a hold: still PENDING, waiting for its capture from now), capture →
 * SUCCESS for the captured amount, return → FAILED/EXPIRED with its reason.
 */
export function settledCharge(charge: Charge, settlement: Settlement, now: Date): Charge {
  const { pendingReason: _reason, ...rest } = charge;
  if (settlement.kind === 'approve') {
    if (charge.holdSeconds !== undefined) {
      return { ...charge, pendingReason: 'capture', expiresAt: new Date(now.getTime() + charge.holdSeconds * 1000).toISOString() };
    }
    return { ...rest, status: 'SUCCESS' };
  }
  if (settlement.kind === 'capture') {
    return { ...rest, status: 'SUCCESS', amount: settlement.amount, authorizedAmount: charge.amount };
  }
  return { ...rest, status: settlement.status, ...(settlement.failureReason ? { failureReason: settlement.failureReason } : {}) };
}

function pendingMarkerPut(charge: Charge): TransactItem {
  if (!charge.expiresAt || !charge.pendingReason) throw new Error('a PENDING charge needs expiresAt and pendingReason');
  const marker: PendingCharge = pendingOf(charge);
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
    ...(typeof item.holdSeconds === 'number' ? { holdSeconds: item.holdSeconds } : {}),
    ...optionalString(item, 'idempotencyKey'),
    ...optionalString(item, 'description'),
    ...optionalString(item, 'agentName'),
    ...optionalCounted(item),
    ...optionalString(item, 'grantId'),
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
  /** Approved by the user: SUCCESS, the held amount to the agent; a hold instead waits for its capture. */
  | { kind: 'approve' }
  /** Captured by the agent: SUCCESS for `amount` (≤ the held amount), the rest back to the user. */
  | { kind: 'capture'; amount: number }
  /** Declined, released or expired: the hold back to the user. `awaiting`: only while it waits for that. */
  | { kind: 'return'; status: 'FAILED' | 'EXPIRED'; failureReason: string | null; awaiting?: PendingReason };

/** What goes with a settlement's transaction. */
export interface SettleOptions {
  /**
   * The caller's own items (an agent's idempotency record and kill switch), each named with what
   * its failure means: their meanings come out as they are.
   */
  extra?: readonly TransactEntry[];
  /** The settlement's webhook events (built from `settledCharge`), written LAST. */
  events?: readonly OutboxEvent[];
}

/**
 * Ends (or, for a hold the user approves, advances) a PENDING charge in one transaction: the
 * charge's new state, the user's held money (to the agent's shard on approval or capture, back to
 * the balance otherwise, lowering the spend counters that counted what went back), and the marker
 * deleted. A hold the user approves only changes state: it now waits for the agent's capture, for
 * `holdSeconds` from the approval.
 *
 * The charge's condition is the state `pending` was read in: still PENDING with that
 * `pendingReason` and that `expiresAt` (and, unless it expires, not past it). So a transition
 * commits only from the state its caller saw, and the charge it leaves is exactly
 * `settledCharge(<the charge as read>, settlement, now)`: callers answer with that, never with a
 * read-back that another transition may already have moved on. Throws ChargeNotPendingError (with
 * the status it has now; EXPIRED when past `expiresAt`) when it lost to another settlement or may
 * no longer act, ChargeAwaitsApprovalError for a capture before the user approved, and
 * StaleReadError when the charge is still PENDING but moved on in a way this settlement still
 * applies to (a hold the user approved meanwhile, for a release): read again and retry.
 */
export async function settlePending(pending: PendingCharge, settlement: Settlement, now: Date, opts: SettleOptions = {}): Promise<void> {
  const { extra = [], events = [] } = opts;
  const counted = countedOf(pending);
  let basis: ReleaseBasis = assumeCounted(counted);
  let grantBasis: GrantReturnBasis = assumeGrantCounted;
  // Three rounds at most: then with the spend periods the user's item, and the grant's, showed.
  for (let round = 0; round < 3; round++) {
    const result = await transactWrite(
      withOutbox([...extra, ...settleItems(pending, settlement, counted, { user: basis, grant: grantBasis }, now)], events, now),
    );
    if (result.committed) return;
    const { userItem, grantItem } = result.outcome;
    if (userItem) basis = releaseBasis(userItem, { ...pending, counted }, returnedOf(pending, settlement));
    if (grantItem) grantBasis = grantReturnBasis(grantItem, counted, returnedOf(pending, settlement));
  }
  throw new StaleReadError('user spend counters');
}

/** Why the charge's condition failed, from the item as it was. */
function chargeMovedOn(old: Record<string, unknown> | undefined, pending: PendingCharge, settlement: Settlement, now: Date): Error {
  const status = (old?.status as ChargeStatus | undefined) ?? 'FAILED';
  if (status !== 'PENDING') return new ChargeNotPendingError(status);
  // The sweeper: moved on since its index showed it, or not due: not its to end now.
  if (isExpiry(settlement)) return new ChargeNotPendingError('PENDING');
  // Still PENDING but past expiresAt: report it as expired, whatever the sweeper has done yet.
  if (typeof old?.expiresAt === 'string' && old.expiresAt <= now.toISOString()) return new ChargeNotPendingError('EXPIRED');
  const reason = old?.pendingReason as PendingReason | undefined;
  const acts = actsOn(settlement);
  // Moved on while PENDING (the user approved the hold): act again on what it is now, if it still may.
  const moved = reason !== pending.pendingReason || old?.expiresAt !== pending.expiresAt;
  if (moved && (acts === undefined || acts === reason)) return new StaleReadError('pending charge');
  if (settlement.kind === 'capture' && reason === 'user_approval') return new ChargeAwaitsApprovalError();
  return new ChargeNotPendingError('PENDING');
}

const isExpiry = (s: Settlement) => s.kind === 'return' && s.status === 'EXPIRED';

/** What goes back to the user's balance. */
function returnedOf(pending: PendingCharge, settlement: Settlement): number {
  if (settlement.kind === 'return') return pending.amount;
  if (settlement.kind === 'capture') return pending.amount - settlement.amount;
  return 0;
}

/** The pendingReason a settlement acts on (undefined: any). */
function actsOn(settlement: Settlement): PendingReason | undefined {
  if (settlement.kind === 'approve') return 'user_approval';
  if (settlement.kind === 'capture') return 'capture';
  return settlement.awaiting;
}

/** The user's item (or the grant's) refused giving money back: its spend counters are not as assumed. Retry with it. */
interface CountersMoved {
  userItem?: OldItem;
  grantItem?: OldItem;
}

/**
 * A settlement's items. When several conditions fail: the charge's (chargeMovedOn) speaks first,
 * then the user's item when money goes back (another round with the counters it shows), then the
 * shard's cap (BalanceLimitError).
 */
function settleItems(
  pending: PendingCharge,
  settlement: Settlement,
  counted: SpendCounted,
  bases: { user: ReleaseBasis; grant: GrantReturnBasis },
  now: Date,
): TransactEntry<CountersMoved>[] {
  const basis = bases.user;
  const table = config().TABLE_NAME;
  const chargeKey = keys.charge(pending.agentId, pending.chargeId);
  const nowIso = now.toISOString();
  const acts = actsOn(settlement);
  if (acts !== undefined && acts !== pending.pendingReason) {
    throw settlement.kind === 'capture' ? new ChargeAwaitsApprovalError() : new ChargeNotPendingError('PENDING');
  }
  // The state it was read in, exactly: what this settlement leaves is then known without a read.
  const guard = {
    ConditionExpression: `#status = :pending AND pendingReason = :reason AND expiresAt = :seen AND expiresAt ${isExpiry(settlement) ? '<=' : '>'} :now`,
    ExpressionAttributeNames: { '#status': 'status' },
    values: { ':pending': 'PENDING', ':reason': pending.pendingReason, ':seen': pending.expiresAt, ':now': nowIso },
  };
  const markerKey = keys.pendingCharge(pending.chargeId);
  const chargeMoved = { onConditionFailed: (old: OldItem | undefined) => chargeMovedOn(old, pending, settlement, now), precedence: 2 };

  // A hold the user approves: it now waits for the agent's capture, from now on.
  if (settlement.kind === 'approve' && pending.holdSeconds !== undefined) {
    const expiresAt = new Date(now.getTime() + pending.holdSeconds * 1000).toISOString();
    return [
      named(
        {
          Update: {
            TableName: table,
            Key: chargeKey,
            UpdateExpression: 'SET pendingReason = :capture, expiresAt = :expiresAt, approvedAt = :now',
            ConditionExpression: guard.ConditionExpression,
            ExpressionAttributeNames: guard.ExpressionAttributeNames,
            ExpressionAttributeValues: { ...guard.values, ':capture': 'capture', ':expiresAt': expiresAt },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        chargeMoved,
      ),
      {
        Update: {
          TableName: table,
          Key: markerKey,
          UpdateExpression: 'SET pendingReason = :capture, expiresAt = :expiresAt, GSI1SK = :sk',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeValues: { ':capture': 'capture', ':expiresAt': expiresAt, ':sk': `${expiresAt}#${pending.chargeId}` },
        },
      },
    ];
  }

  const paid = settlement.kind === 'approve' ? pending.amount : settlement.kind === 'capture' ? settlement.amount : 0;
  const returned = returnedOf(pending, settlement);
  let chargeUpdate: TransactItem;
  if (settlement.kind === 'return') {
    chargeUpdate = {
      Update: {
        TableName: table,
        Key: chargeKey,
        UpdateExpression: `SET #status = :status, settledAt = :now${settlement.failureReason ? ', failureReason = :failure' : ''} REMOVE pendingReason`,
        ConditionExpression: guard.ConditionExpression,
        ExpressionAttributeNames: guard.ExpressionAttributeNames,
        ExpressionAttributeValues: {
          ...guard.values,
          ':status': settlement.status,
          ...(settlement.failureReason ? { ':failure': settlement.failureReason } : {}),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  } else {
    const capture = settlement.kind === 'capture';
    chargeUpdate = {
      Update: {
        TableName: table,
        Key: chargeKey,
        UpdateExpression: `SET #status = :status, settledAt = :now${capture ? ', amount = :captured, authorizedAmount = :authorized' : ''} REMOVE pendingReason`,
        ConditionExpression: `${guard.ConditionExpression}${capture ? ' AND amount = :authorized' : ''}`,
        ExpressionAttributeNames: guard.ExpressionAttributeNames,
        ExpressionAttributeValues: {
          ...guard.values,
          ':status': 'SUCCESS',
          ...(capture ? { ':captured': settlement.amount, ':authorized': pending.amount } : {}),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }
  const userUpdate: TransactItem = {
    Update: {
      TableName: table,
      Key: keys.user(pending.userId),
      ...releaseUserUpdate({ ...pending, counted }, basis, returned),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
  const items: TransactEntry<CountersMoved>[] = [
    named(chargeUpdate, chargeMoved),
    // Only money going back is conditioned on the counters; with none, a failure here is never expected.
    returned > 0
      ? named(userUpdate, { onConditionFailed: (old) => (old ? outcome({ userItem: old }) : undefined), precedence: 1 })
      : userUpdate,
    { Delete: { TableName: table, Key: markerKey, ConditionExpression: 'attribute_exists(PK)' } },
  ];
  if (paid > 0) items.push(shardCredit(pending.agentId, randomShard(), pending.currency, paid));
  const grantItem =
    pending.grantId === undefined
      ? undefined
      : grantSettleItem({ userId: pending.userId, grantId: pending.grantId }, returned, counted, bases.grant, { active: false });
  if (grantItem) {
    items.push(named(grantItem, { onConditionFailed: (old) => (old ? outcome({ grantItem: old }) : undefined), precedence: 1 }));
  }
  return items;
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
    ...optionalNumber(item, 'holdSeconds'),
    ...optionalNumber(item, 'authorizedAmount'),
    ...optionalNumber(item, 'refundedAmount'),
    ...optionalCounted(item),
    ...optionalString(item, 'grantId'),
  };
}

/** The `counted` record of an item, when it has a well-formed one (older items have none). */
function optionalCounted(item: Record<string, unknown>): { counted?: SpendCounted } {
  const c = item.counted as Partial<SpendCounted> | undefined;
  if (c === null || typeof c !== 'object') return {};
  if (typeof c.day !== 'string' || typeof c.month !== 'string' || typeof c.agent !== 'boolean') return {};
  return { counted: { day: c.day, month: c.month, agent: c.agent } };
}

const optionalNumber = <K extends string>(item: Record<string, unknown>, name: K) =>
  (typeof item[name] === 'number' ? { [name]: item[name] } : {}) as Partial<Record<K, number>>;

const optionalString = <K extends string>(item: Record<string, unknown>, name: K) =>
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
