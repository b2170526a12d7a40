/**
 * How a PENDING charge ends (docs/lifecycle.md): approved, captured, declined, released or
 * expired, each ONE TransactWriteItems from the state the charge was read in — the charge's new
 * state, the user's held money (to the agent's shard, or back to the balance), the marker deleted
 * — plus the caller's own items (an agent's idempotency record and kill switch) and the outbox.
 */
import { config } from '../config';
import { type Charge, type ChargeStatus, countedOf, type PendingReason, type SpendCounted } from '../core/charges';
import { AgentBlockedError, ChargeAwaitsApprovalError, ChargeNotPendingError, StaleReadError } from '../core/errors';
import type { OutboxEvent } from '../core/events';
import { randomShard, shardCredit, shardEnabledCheck } from './balance.repository';
import { type PendingCharge, pendingChargeKey } from './charge-pending.repository';
import { assumeGrantCounted, type GrantReturnBasis, grantInactiveError, grantReturnBasis, grantSettleItem } from './grant-charge';
import { withOutbox } from './outbox';
import { assumeCounted, type ReleaseBasis, releaseBasis, releaseUserUpdate } from './payer';
import { keys, TTL_ATTRIBUTE } from './table';
import { named, type OldItem, outcome, type TransactEntry, type TransactItem, transactWrite } from './transact';

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
  /** An agent's capture: its key hash, for the credited shard's copy of the kill switch (balance.repository.ts). */
  killSwitch?: string;
  /**
   * An x402 purchase's own ending (use-cases/purchases.ts): captured because its transfer is on
   * chain (`transaction`), or released because it can no longer land. Only this ends a purchase whose
   * payment was signed, whatever its `expiresAt` says (the chain decides, not the clock), and no
   * agent is credited: the money left by the hot wallet. Every other settlement is refused such a
   * purchase by its condition, and any capture any purchase.
   */
  purchase?: { transaction?: string };
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
  const { extra = [], events = [], killSwitch, purchase } = opts;
  const counted = countedOf(pending);
  let basis: ReleaseBasis = assumeCounted(counted);
  let grantBasis: GrantReturnBasis = assumeGrantCounted;
  // Three rounds at most: then with the spend periods the user's item, and the grant's, showed.
  for (let round = 0; round < 3; round++) {
    const result = await transactWrite(
      withOutbox(
        [...extra, ...settleItems(pending, settlement, counted, { user: basis, grant: grantBasis }, now, { killSwitch, purchase })],
        events,
        now,
      ),
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

/** The user's item refused giving money back: its spend counters are not as assumed. Retry with it. */
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
  own: Pick<SettleOptions, 'killSwitch' | 'purchase'> = {},
): TransactEntry<CountersMoved>[] {
  const { killSwitch, purchase } = own;
  const basis = bases.user;
  const table = config().TABLE_NAME;
  const chargeKey = pendingChargeKey(pending);
  const nowIso = now.toISOString();
  const acts = actsOn(settlement);
  if (acts !== undefined && acts !== pending.pendingReason) {
    throw settlement.kind === 'capture' ? new ChargeAwaitsApprovalError() : new ChargeNotPendingError('PENDING');
  }
  // The state it was read in, exactly: what this settlement leaves is then known without a read.
  // A purchase's own ending waits for the chain, not the clock; any other settlement never ends a
  // purchase whose payment may be on its way, and never captures one (use-cases/purchases.ts).
  const purchaseGuard = purchase
    ? 'attribute_exists(#xp.signed)'
    : settlement.kind === 'capture' || (settlement.kind === 'approve' && pending.holdSeconds === undefined)
      ? 'attribute_not_exists(#xp)'
      : 'attribute_not_exists(#xp.signed)';
  const guard = {
    ConditionExpression: `#status = :pending AND pendingReason = :reason AND expiresAt = :seen${purchase ? '' : ` AND expiresAt ${isExpiry(settlement) ? '<=' : '>'} :now`} AND ${purchaseGuard}`,
    ExpressionAttributeNames: { '#status': 'status', '#xp': 'purchase' },
    values: {
      ':pending': 'PENDING',
      ':reason': pending.pendingReason,
      ':seen': pending.expiresAt,
      ...(purchase ? {} : { ':now': nowIso }),
    } as Record<string, unknown>,
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
            ExpressionAttributeValues: { ...guard.values, ':now': nowIso, ':capture': 'capture', ':expiresAt': expiresAt },
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
          ConditionExpression: MARKER_PENDING,
          ExpressionAttributeValues: { ':capture': 'capture', ':expiresAt': expiresAt, ':sk': `${expiresAt}#${pending.chargeId}` },
        },
      },
      // After the charge's own condition, which speaks first on a tie.
      ...approvalConditions(pending, now),
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
  } else {
    const capture = settlement.kind === 'capture';
    chargeUpdate = {
      Update: {
        TableName: table,
        Key: chargeKey,
        UpdateExpression: `SET #status = :status, settledAt = :settledAt${capture ? ', amount = :captured, authorizedAmount = :authorized' : ''}${purchase?.transaction ? ', #xp.#tx = :tx' : ''} REMOVE pendingReason`,
        ConditionExpression: `${guard.ConditionExpression}${capture ? ' AND amount = :authorized' : ''}`,
        ExpressionAttributeNames: { ...guard.ExpressionAttributeNames, ...(purchase?.transaction ? { '#tx': 'transaction' } : {}) },
        ExpressionAttributeValues: {
          ...guard.values,
          ':status': 'SUCCESS',
          ':settledAt': nowIso,
          ...(capture ? { ':captured': settlement.amount, ':authorized': pending.amount } : {}),
          ...(purchase?.transaction ? { ':tx': purchase.transaction } : {}),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }
  const release = releaseUserUpdate({ ...pending, counted }, basis, returned);
  const capturing = settlement.kind === 'capture';
  // A purchase's transfer is on chain: its capture is owed whatever the payer's policy says now.
  const blockable = capturing && !purchase;
  const userUpdate: TransactItem = {
    Update: {
      TableName: table,
      Key: keys.user(pending.userId),
      ...release,
      ...(blockable
        ? {
            // A capture after the payer blocked the agent is refused (DESIGN §16): by this condition, not a read.
            ConditionExpression: `${release.ConditionExpression} AND (attribute_not_exists(policy.agents.#blk.blocked) OR policy.agents.#blk.blocked <> :blocked)`,
            ExpressionAttributeNames: { ...release.ExpressionAttributeNames, '#blk': pending.agentId },
            ExpressionAttributeValues: { ...release.ExpressionAttributeValues, ':blocked': true },
          }
        : {}),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
  const items: TransactEntry<CountersMoved>[] = [
    named(chargeUpdate, chargeMoved),
    // Money going back is conditioned on the counters, a capture on the agent not being blocked; else a failure is never expected.
    returned > 0 || blockable
      ? named(userUpdate, {
          onConditionFailed: (old) => {
            if (blockable && isBlocked(old, pending.agentId)) return new AgentBlockedError();
            return old && returned > 0 ? outcome({ userItem: old }) : undefined;
          },
          precedence: 1,
        })
      : userUpdate,
    settledMarker(markerKey, now),
  ];
  const approving = settlement.kind === 'approve';
  // A purchase pays no agent: its money left by the hot wallet (docs/x402.md, the wallet's equation).
  if (!purchase && (paid > 0 || killSwitch !== undefined)) {
    // The agent's capture carries its own key's kill switch; a payer's approval, the switch for any key of the agent.
    const guard = killSwitch !== undefined ? { killSwitch } : approving ? { enabledAgent: { precedence: PAYER_SIDE_KILL_SWITCH } } : {};
    items.push(shardCredit(pending.agentId, randomShard(), pending.currency, paid, guard));
  }
  // Money to the agent (a capture, an approval) only while the grant is active. A purchase's
  // transfer, once on chain, is captured even if the grant ended since it was signed.
  const paysAgent = (capturing || approving) && !purchase;
  const grantItem =
    pending.grantId === undefined
      ? undefined
      : grantSettleItem({ userId: pending.userId, grantId: pending.grantId }, returned, counted, bases.grant, {
          ...(paysAgent ? { activeAt: now } : {}),
        });
  if (grantItem) {
    items.push(
      named(grantItem, {
        onConditionFailed: (old) => {
          // Revoked or ended since the charge was made (DESIGN §16, docs/grants.md).
          const inactive = paysAgent ? grantInactiveError(old, now) : undefined;
          if (inactive) return inactive;
          return old && returned > 0 ? outcome({ grantItem: old }) : undefined;
        },
        precedence: 1,
      }),
    );
  }
  return items;
}

/**
 * The payer's kill switch ranks with the charge's own condition and after it (the item written
 * earlier speaks on a tie): a payer who lost a race is told so, and an approval that would pay a
 * disabled agent is refused as AgentDisabledError.
 */
const PAYER_SIDE_KILL_SWITCH = 2;

/**
 * What an approval of a hold (a state change only: no shard credited, no grant counter moved)
 * must still find true: the agent enabled (one shard's kill switch, for any key) and the grant it
 * was made under active. Approving a plain charge carries both on the items it writes.
 */
function approvalConditions(pending: PendingCharge, now: Date): TransactEntry<CountersMoved>[] {
  const items: TransactEntry<CountersMoved>[] = [shardEnabledCheck(pending.agentId, randomShard(), PAYER_SIDE_KILL_SWITCH)];
  const grantCheck =
    pending.grantId === undefined
      ? undefined
      : grantSettleItem({ userId: pending.userId, grantId: pending.grantId }, 0, countedOf(pending), assumeGrantCounted, { activeAt: now });
  if (grantCheck) items.push(named(grantCheck, { onConditionFailed: (old) => grantInactiveError(old, now), precedence: 1 }));
  return items;
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
function settledMarker(markerKey: ReturnType<typeof keys.pendingCharge>, now: Date): TransactItem {
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

/** Whether the user item `old` shows the payer's policy blocking `agentId`. */
function isBlocked(old: OldItem | undefined, agentId: string): boolean {
  const agents = (old?.policy as { agents?: Record<string, { blocked?: unknown }> } | undefined)?.agents;
  return agents?.[agentId]?.blocked === true;
}
