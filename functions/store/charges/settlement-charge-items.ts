/**
 * The charge's own items in a settlement's transaction (settlement-items.ts): the charge updated
 * under the condition that it is still in the state it was read in, the reading of that
 * condition's failure (`chargeMovedOn`, which speaks first), and its pending marker moved or
 * retired. Apart from the money's items because these decide whether the settlement may happen at
 * all; the others only say how much moves where.
 */
import { config } from '../../config';
import type { ChargeStatus, PendingReason } from '../../core/charges';
import { ChargeAwaitsApprovalError, ChargeNotPendingError, StaleReadError } from '../../core/errors';
import type { Minor } from '../../core/money';
import { actsOn, isExpiry, type Settlement, type SettlementGuard } from '../../core/settlement-decision';
import { type keys, TTL_ATTRIBUTE } from '../table';
import type { OldItem, TransactItem } from '../transact';
import type { PendingCharge, pendingChargeKey } from './charge-pending.repository';

/** The charge's side of a settlement: its condition, its keys, and what a failure of the condition means. */
export interface ChargeSide {
  guard: ReturnType<typeof chargeGuard>;
  key: ReturnType<typeof pendingChargeKey>;
  markerKey: ReturnType<typeof keys.pendingCharge>;
  moved: { onConditionFailed: (old: OldItem | undefined) => Error; precedence: number };
}

/**
 * The charge's condition: the state it was read in, exactly, so what a settlement leaves is known
 * without a read. A purchase's own ending waits for the chain, not the clock; any other settlement
 * never ends a purchase whose payment may be on its way, and never captures one
 * (use-cases/x402-purchases/purchases.ts).
 */
export function chargeGuard(pending: PendingCharge, guard: SettlementGuard, now: Date) {
  const clock = guard.clock === 'chain' || guard.clock === 'any' ? '' : ` AND expiresAt ${guard.clock === 'due' ? '<=' : '>'} :now`;
  const purchase = {
    signed: 'attribute_exists(#xp.signed)',
    none: 'attribute_not_exists(#xp)',
    unsigned: 'attribute_not_exists(#xp.signed)',
  }[guard.purchase];
  return {
    ConditionExpression: `#status = :pending AND pendingReason = :reason AND expiresAt = :seen${clock} AND ${purchase}`,
    ExpressionAttributeNames: { '#status': 'status', '#xp': 'purchase' },
    values: {
      ':pending': 'PENDING',
      ':reason': pending.pendingReason,
      ':seen': pending.expiresAt,
      ...(guard.clock === 'chain' || guard.clock === 'any' ? {} : { ':now': now.toISOString() }),
    } as Record<string, unknown>,
  };
}

/**
 * Why the charge's condition failed, from the item as it was: ChargeNotPendingError (with the
 * status it has now; EXPIRED when past `expiresAt`) when it lost to another settlement or may no
 * longer act, ChargeAwaitsApprovalError for a capture before the user approved, StaleReadError
 * when it is still PENDING but moved on in a way this settlement still applies to (read again).
 */
export function chargeMovedOn(old: Record<string, unknown> | undefined, pending: PendingCharge, settlement: Settlement, now: Date): Error {
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

/** A hold the payer approved: it now waits for the agent's capture, until `expiresAt`. */
export function approvedChargeUpdate(side: ChargeSide, expiresAt: string, now: Date): TransactItem {
  const { guard } = side;
  return {
    Update: {
      TableName: config().TABLE_NAME,
      Key: side.key,
      UpdateExpression: 'SET pendingReason = :capture, expiresAt = :expiresAt, approvedAt = :now',
      ConditionExpression: guard.ConditionExpression,
      ExpressionAttributeNames: guard.ExpressionAttributeNames,
      ExpressionAttributeValues: { ...guard.values, ':now': now.toISOString(), ':capture': 'capture', ':expiresAt': expiresAt },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** The marker of a hold the payer approved, moved to the capture's deadline. */
export function approvedMarkerUpdate(side: ChargeSide, chargeId: string, expiresAt: string): TransactItem {
  return {
    Update: {
      TableName: config().TABLE_NAME,
      Key: side.markerKey,
      UpdateExpression: 'SET pendingReason = :capture, expiresAt = :expiresAt, GSI1SK = :sk',
      ConditionExpression: MARKER_PENDING,
      ExpressionAttributeValues: { ':capture': 'capture', ':expiresAt': expiresAt, ':sk': `${expiresAt}#${chargeId}` },
    },
  };
}

/**
 * The charge as a settlement ends it: FAILED or EXPIRED with its reason (a return), or SUCCESS (an
 * approval, a capture for `paid` of its authorized amount, a purchase under its transaction).
 */
export function endedChargeUpdate(
  side: ChargeSide,
  ending: { pending: PendingCharge; settlement: Settlement; purchase?: { transaction?: string } | undefined; paid: Minor; now: Date },
): TransactItem {
  const { pending, settlement, purchase, paid, now } = ending;
  const { guard } = side;
  const table = config().TABLE_NAME;
  const nowIso = now.toISOString();
  const capture = settlement.kind === 'capture';
  if (settlement.kind === 'return') {
    return {
      Update: {
        TableName: table,
        Key: side.key,
        UpdateExpression: `SET #status = :status, settledAt = :settledAt${settlement.failureReason ? ', failureReason = :failure' : ''} REMOVE pendingReason`,
        ConditionExpression: guard.ConditionExpression,
        ExpressionAttributeNames: guard.ExpressionAttributeNames,
        ExpressionAttributeValues: {
          ...guard.values,
          ':settledAt': nowIso,
          ':status': settlement.status,
          ...(settlement.failureReason ? { ':failure': settlement.failureReason } : {}),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }
  const transaction = purchase?.transaction;
  return {
    Update: {
      TableName: table,
      Key: side.key,
      UpdateExpression: `SET #status = :status, settledAt = :settledAt${capture ? ', amount = :captured, authorizedAmount = :authorized' : ''}${transaction ? ', #xp.#tx = :tx' : ''} REMOVE pendingReason`,
      ConditionExpression: `${guard.ConditionExpression}${capture ? ' AND amount = :authorized' : ''}`,
      ExpressionAttributeNames: { ...guard.ExpressionAttributeNames, ...(transaction ? { '#tx': 'transaction' } : {}) },
      ExpressionAttributeValues: {
        ...guard.values,
        ':status': 'SUCCESS',
        ':settledAt': nowIso,
        ...(capture ? { ':captured': paid, ':authorized': pending.amount } : {}),
        ...(transaction ? { ':tx': transaction } : {}),
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** A marker still standing for a PENDING charge: there, and not yet settled (a settled one is a tombstone). */
const MARKER_PENDING = 'attribute_exists(PK) AND attribute_not_exists(settledAt)';

/** How long a settled marker stays before TTL removes it: long past any settlement that read it as PENDING. */
const SETTLED_MARKER_TTL_SECONDS = 86_400;

/**
 * Settling a charge retires its marker as a tombstone instead of deleting it: `settledAt` set, out of
 * the sweeper's index (its GSI1 keys removed), gone by TTL a day later. So the seven functions that
 * settle charges hold no DeleteItem (docs/operating/least-privilege.md); readers treat a settled
 * marker as absent (`getPendingCharge`), and a second settlement's condition refuses it as before.
 */
export function settledMarker(markerKey: ReturnType<typeof keys.pendingCharge>, now: Date): TransactItem {
  return {
    Update: {
      TableName: config().TABLE_NAME,
      Key: markerKey,
      UpdateExpression: 'SET settledAt = :now, #ttl = :ttl REMOVE GSI1PK, GSI1SK',
      ConditionExpression: MARKER_PENDING,
      ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: { ':now': now.toISOString(), ':ttl': Math.floor(now.getTime() / 1000) + SETTLED_MARKER_TTL_SECONDS },
    },
  };
}
