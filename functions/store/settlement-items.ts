/**
 * The items of a settlement's ONE TransactWriteItems (approve, capture, decline, release, expiry,
 * an x402 purchase's capture or release), built in one place from the pure decision
 * (core/settlement-decision.ts `decidePendingSettlement`) and the charge as read: what each item
 * is, what its condition holds, and what a failure of that condition means (store/transact.ts
 * `named`). The repository (charge-settlement.repository.ts) only writes them, and writes them
 * again with the counters a failed round showed (`releaseBasis`, `grantReturnBasis`).
 *
 *   - `idempotency`, `agentKey` (the agent's own capture or release): its idempotency record; a
 *     release, which credits no shard, carries the agent item's kill switch (`agentEnabledCheck`);
 *   - `charge`: the charge, conditioned on the state it was read in (still PENDING with that
 *     `pendingReason` and `expiresAt`, the clock and the purchase as the decision's guard says):
 *     its new state, or (a hold the payer approves) its new `pendingReason` and deadline;
 *   - `payerRelease`: the user's item, the whole hold out of `held`, `returned` back to the
 *     balance and off the spend counters that counted it (`releaseUserUpdate`); a capture's is
 *     also conditioned on the payer not blocking the agent;
 *   - `marker`: the pending marker retired as a tombstone, or moved to the capture's deadline;
 *   - `agentShard`: one shard of the agent credited with `paid` (carrying the capture's key kill
 *     switch, or an approval's check for any key of the agent), or, for a hold's approval, only
 *     that check;
 *   - `grant`: the grant's give-back of `returned` (`grantSettleItem`), conditioned on the grant
 *     being active when money goes to the agent; a hold's approval only checks that;
 *   - `outbox`: the settlement's webhook events.
 *
 * When several conditions fail, the charge's (`chargeMovedOn`, precedence 2) speaks first, then
 * the user's and the grant's (another round with the counters they show, or the payer's block,
 * or the grant's end), then the shard's cap (BalanceLimitError). The order of the items is what
 * the pinned transactions show (test/store/settlement-transaction.int.test.ts).
 */
import { config } from '../config';
import type { ChargeStatus, PendingReason, SpendCounted } from '../core/charges';
import { countedOf } from '../core/charges';
import { AgentBlockedError, ChargeAwaitsApprovalError, ChargeNotPendingError, StaleReadError } from '../core/errors';
import type { OutboxEvent } from '../core/events';
import type { IdempotencyWrite } from '../core/idempotency';
import type { Currency, Minor } from '../core/money';
import { actsOn, isExpiry, type PendingSettlementDecision, type Settlement, type SettlementGuard } from '../core/settlement-decision';
import { agentEnabledCheck } from './agent.repository';
import { randomShard, shardCredit, shardEnabledCheck } from './balance.repository';
import { type PendingCharge, pendingChargeKey } from './charge-pending.repository';
import { counterPeriod, grantInactiveError } from './grant-charge';
import { idempotencyPut } from './idempotency.repository';
import { headroom, readMinor } from './numbers';
import { outboxPut } from './outbox';
import { agentCounter, heldAttribute, pruned, type UserUpdate } from './payer';
import { keys, TTL_ATTRIBUTE } from './table';
import { named, type OldItem, outcome, type TransactEntry, type TransactItem } from './transact';

/** A settlement to write: the decision, and what it was decided from. */
export interface SettlementWrite {
  pending: PendingCharge;
  settlement: Settlement;
  decision: Exclude<PendingSettlementDecision, { kind: 'refused' }>;
  /** What the caller believes of the payer's and the grant's counters (`assumeCounted` first, then what a failed round showed). */
  bases: { user: ReleaseBasis; grant: GrantReturnBasis };
  /** The agent's own capture or release: its key's hash and its idempotency record. */
  agent?: { keyHash: string; idem: IdempotencyWrite } | undefined;
  /** An x402 purchase's own ending: captured under this `transaction`, or released. */
  purchase?: { transaction?: string } | undefined;
  events: readonly OutboxEvent[];
  now: Date;
}

/** The user's or the grant's item refused giving money back: its counters are not as assumed. Retry with it. */
export interface CountersMoved {
  userItem?: OldItem;
  grantItem?: OldItem;
}

type Entry = TransactEntry<CountersMoved>;

/** A settlement's items, by what each one is. */
export interface SettlementItems {
  idempotency?: Entry;
  agentKey?: Entry;
  charge: Entry;
  payerRelease?: Entry;
  marker: TransactItem;
  agentShard?: Entry;
  grant?: Entry;
  outbox?: TransactItem;
}

/** The transaction of a settlement's items. */
export const settlementTransaction = (items: SettlementItems): Entry[] =>
  [items.idempotency, items.agentKey, items.charge, items.payerRelease, items.marker, items.agentShard, items.grant, items.outbox].filter(
    (item): item is Entry => item !== undefined,
  );

/** A settlement's items, each with what its failed condition means. */
export function settlementItems(write: SettlementWrite): SettlementItems {
  const { pending, settlement, decision, agent, purchase, events, now } = write;
  const table = config().TABLE_NAME;
  const nowIso = now.toISOString();
  const counted = countedOf(pending);
  const capture = settlement.kind === 'capture';
  // A capture credits a shard, which carries the key's kill switch; a release credits none: the agent item's.
  const killSwitch = agent && capture ? agent.keyHash : undefined;
  const own: Pick<SettlementItems, 'idempotency' | 'agentKey' | 'outbox'> = {
    ...(agent ? { idempotency: idempotencyPut(agent.idem, now) } : {}),
    ...(agent && !capture ? { agentKey: agentEnabledCheck(agent.keyHash) } : {}),
  };
  const outbox = outboxPut(events, now);
  if (outbox) own.outbox = outbox;

  const guard = chargeGuard(pending, decision.guard, now);
  const chargeKey = pendingChargeKey(pending);
  const markerKey = keys.pendingCharge(pending.chargeId);
  const chargeMoved = { onConditionFailed: (old: OldItem | undefined) => chargeMovedOn(old, pending, settlement, now), precedence: 2 };

  // A hold the user approves: it now waits for the agent's capture, from now on.
  if (decision.kind === 'advance') {
    const { expiresAt } = decision;
    const grantCheck =
      pending.grantId === undefined
        ? undefined
        : grantSettleItem({ userId: pending.userId, grantId: pending.grantId }, 0, counted, assumeGrantCounted, { activeAt: now });
    return {
      ...own,
      charge: named(
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
      marker: {
        Update: {
          TableName: table,
          Key: markerKey,
          UpdateExpression: 'SET pendingReason = :capture, expiresAt = :expiresAt, GSI1SK = :sk',
          ConditionExpression: MARKER_PENDING,
          ExpressionAttributeValues: { ':capture': 'capture', ':expiresAt': expiresAt, ':sk': `${expiresAt}#${pending.chargeId}` },
        },
      },
      // What an approval of a hold (no shard credited, no grant counter moved) must still find true:
      // the agent enabled (one shard's kill switch, for any key) and the grant it was made under
      // active. After the charge's own condition, which speaks first on a tie.
      agentShard: shardEnabledCheck(pending.agentId, randomShard(), PAYER_SIDE_KILL_SWITCH),
      ...(grantCheck ? { grant: named(grantCheck, { onConditionFailed: (old) => grantInactiveError(old, now), precedence: 1 }) } : {}),
    };
  }

  const { paid, returned, paysAgent, blockable } = decision;
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
    const transaction = purchase?.transaction;
    chargeUpdate = {
      Update: {
        TableName: table,
        Key: chargeKey,
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
  const release = releaseUserUpdate({ ...pending, counted }, write.bases.user, returned);
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
  // A purchase pays no agent: its money left by the hot wallet (docs/x402.md, the wallet's equation).
  const creditsAgent = !purchase && (paid > 0 || killSwitch !== undefined);
  // The agent's capture carries its own key's kill switch; a payer's approval, the switch for any key of the agent.
  const shardGuard =
    killSwitch !== undefined
      ? { killSwitch }
      : settlement.kind === 'approve'
        ? { enabledAgent: { precedence: PAYER_SIDE_KILL_SWITCH } }
        : {};
  // Money to the agent (a capture, an approval) only while the grant is active. A purchase's
  // transfer, once on chain, is captured even if the grant ended since it was signed.
  const grantItem =
    pending.grantId === undefined
      ? undefined
      : grantSettleItem({ userId: pending.userId, grantId: pending.grantId }, returned, counted, write.bases.grant, {
          ...(paysAgent ? { activeAt: now } : {}),
        });
  return {
    ...own,
    charge: named(chargeUpdate, chargeMoved),
    // Money going back is conditioned on the counters, a capture on the agent not being blocked; else a failure is never expected.
    payerRelease:
      returned > 0 || blockable
        ? named(userUpdate, {
            onConditionFailed: (old) => {
              if (blockable && isBlocked(old, pending.agentId)) return new AgentBlockedError();
              return old && returned > 0 ? outcome({ userItem: old }) : undefined;
            },
            precedence: 1,
          })
        : userUpdate,
    marker: settledMarker(markerKey, now),
    ...(creditsAgent ? { agentShard: shardCredit(pending.agentId, randomShard(), pending.currency, paid, shardGuard) } : {}),
    ...(grantItem
      ? {
          grant: named(grantItem, {
            onConditionFailed: (old) => {
              // Revoked or ended since the charge was made (DESIGN §16, docs/grants.md).
              const inactive = paysAgent ? grantInactiveError(old, now) : undefined;
              if (inactive) return inactive;
              return old && returned > 0 ? outcome({ grantItem: old }) : undefined;
            },
            precedence: 1,
          }),
        }
      : {}),
  };
}

/**
 * The charge's condition: the state it was read in, exactly, so what a settlement leaves is known
 * without a read. A purchase's own ending waits for the chain, not the clock; any other settlement
 * never ends a purchase whose payment may be on its way, and never captures one
 * (use-cases/purchases.ts).
 */
function chargeGuard(pending: PendingCharge, guard: SettlementGuard, now: Date) {
  const clock = guard.clock === 'chain' ? '' : ` AND expiresAt ${guard.clock === 'due' ? '<=' : '>'} :now`;
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
      ...(guard.clock === 'chain' ? {} : { ':now': now.toISOString() }),
    } as Record<string, unknown>,
  };
}

/**
 * Why the charge's condition failed, from the item as it was: ChargeNotPendingError (with the
 * status it has now; EXPIRED when past `expiresAt`) when it lost to another settlement or may no
 * longer act, ChargeAwaitsApprovalError for a capture before the user approved, StaleReadError
 * when it is still PENDING but moved on in a way this settlement still applies to (read again).
 */
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

/**
 * The payer's kill switch ranks with the charge's own condition and after it (the item written
 * earlier speaks on a tie): a payer who lost a race is told so, and an approval that would pay a
 * disabled agent is refused as AgentDisabledError.
 */
const PAYER_SIDE_KILL_SWITCH = 2;

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

/**
 * For each of a charge's periods, which counters that counted it (`SpendCounted`) the release
 * lowers: only while the counters are still of that period (`current`), and each only if it
 * holds at least what goes back (never below zero; see `releaseUserUpdate`).
 */
export interface ReleaseBasis {
  day: PeriodRelease;
  month: PeriodRelease;
}
interface PeriodRelease {
  current: boolean;
  user: boolean;
  agent: boolean;
}

/** What a caller assumes before it has seen the item: the counters are the charge's and cover it. */
export function assumeCounted(counted: SpendCounted): ReleaseBasis {
  const period = { current: true, user: true, agent: counted.agent };
  return { day: period, month: period };
}

/**
 * The user item's update that gives a PENDING charge's hold back (decline, release, expiry), or
 * the uncaptured part of it (a capture): the whole hold leaves `held`, `returned` (all of it by
 * default) goes back to the balance, and the counters that counted the charge (`counted`, its
 * record: never a counter that did not count it) are lowered by `returned` if they are still of
 * the charge's periods: the uncaptured remainder stops counting against the payer's limits.
 *
 * A counter is never taken below zero: one that holds less than `returned` (it cannot, unless an
 * operator edited it) is left as it is, which errs on the side of refusing. `basis` is what the
 * caller believes; each branch's condition is the exact complement of the other's, so a wrong
 * belief fails the condition and the old item says what to use (`releaseBasis`).
 */
export function releaseUserUpdate(
  charge: { agentId: string; currency: Currency; amount: Minor; counted: SpendCounted },
  basis: ReleaseBasis,
  returned: Minor = charge.amount,
): UserUpdate {
  const { counted } = charge;
  const names: Record<string, string> = { '#cur': charge.currency, '#held': heldAttribute(charge.currency) };
  const values: Record<string, unknown> = {
    ':amount': charge.amount,
    ':heldNeg': -charge.amount,
    ':ret': returned,
    ':neg': -returned,
    ':headroom': headroom(returned),
  };
  const add = ['#held :heldNeg'];
  const conditions = ['attribute_exists(PK)', '#held >= :amount'];
  if (returned > 0) {
    add.push('#cur :ret');
    conditions.push('(attribute_not_exists(#cur) OR #cur <= :headroom)');
    for (const [attr, key, period, b] of [
      ['spendDay', 'd', counted.day, basis.day],
      ['spendMonth', 'm', counted.month, basis.month],
    ] as const) {
      names[`#${key}`] = attr;
      values[`:${key}`] = period;
      if (!b.current) {
        // Another period's counters now (or none): nothing of this charge is in them.
        conditions.push(`(attribute_not_exists(#${key}) OR #${key}.p <> :${key})`);
        continue;
      }
      conditions.push(`#${key}.p = :${key}`);
      const counters: [string, boolean][] = [[`#${key}.#cur`, b.user]];
      if (counted.agent) {
        names[`#${key}ag`] = agentCounter(charge.currency, charge.agentId);
        counters.push([`#${key}.#${key}ag`, b.agent]);
      }
      for (const [counter, lower] of counters) {
        if (lower) {
          conditions.push(`${counter} >= :ret`);
          add.push(`${counter} :neg`);
        } else {
          // The floor: a counter holding less than what goes back is left alone.
          conditions.push(`(attribute_not_exists(${counter}) OR ${counter} < :ret)`);
        }
      }
    }
  }
  return pruned({
    UpdateExpression: `ADD ${add.join(', ')}`,
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  });
}

/** What to lower for a charge that counted `counted`, as the user item `old` shows the counters. */
export function releaseBasis(
  old: Record<string, unknown>,
  charge: { agentId: string; currency: Currency; counted: SpendCounted },
  returned: Minor,
): ReleaseBasis {
  const { counted } = charge;
  const of = (attr: 'spendDay' | 'spendMonth', period: string): PeriodRelease => {
    const counters = old[attr] as Record<string, unknown> | undefined;
    const current = counters !== undefined && counters.p === period;
    const covers = (name: string) => current && readMinor(counters, name) >= returned;
    return {
      current,
      user: covers(charge.currency),
      agent: counted.agent && covers(agentCounter(charge.currency, charge.agentId)),
    };
  };
  return { day: of('spendDay', counted.day), month: of('spendMonth', counted.month) };
}

/** Which of the grant's period counters a give-back lowers (each only while it is still the charge's period and covers it). */
export interface GrantReturnBasis {
  day: boolean;
  month: boolean;
}

/** Before the item is seen: the counters are the charge's and cover what goes back. */
export const assumeGrantCounted: GrantReturnBasis = { day: true, month: true };

/** What to lower, as the grant item `old` shows its counters. */
export function grantReturnBasis(old: OldItem, counted: SpendCounted, returned: Minor): GrantReturnBasis {
  const covers = (counter: unknown, period: string) =>
    counterPeriod(counter) === period && readMinor(counter as Record<string, unknown>, 'v') >= returned;
  return { day: covers(old.spentDay, counted.day), month: covers(old.spentMonth, counted.month) };
}

/**
 * The grant item's part of a settlement: `returned` (a released, declined or expired hold, the
 * uncaptured rest of a capture) stops counting in `spent` and in the period counters that counted
 * it while they are still of the charge's periods (never below zero: the same floor as the payer's
 * counters, store/payer.ts). `activeAt` (a capture, an approval: money goes to the agent): the
 * grant must be neither revoked nor past its `expiresAt` at that time (`grantInactiveError` tells
 * which). Undefined when there is nothing to write or check.
 */
export function grantSettleItem(
  grant: { userId: string; grantId: string },
  returned: Minor,
  counted: SpendCounted,
  basis: GrantReturnBasis,
  opts: { activeAt?: Date },
): TransactItem | undefined {
  const { activeAt } = opts;
  if (returned === 0 && activeAt === undefined) return undefined;
  const table = config().TABLE_NAME;
  const key = keys.grant(grant.userId, grant.grantId);
  const conditions = ['attribute_exists(PK)'];
  const values: Record<string, unknown> = {};
  // Nothing under a revoked or ended grant pays its agent (DESIGN §16, docs/grants.md), decided here, not by a read.
  if (activeAt !== undefined) {
    conditions.push('attribute_not_exists(revokedAt)', '(attribute_not_exists(expiresAt) OR expiresAt > :activeAt)');
    values[':activeAt'] = activeAt.toISOString();
  }
  if (returned === 0) {
    return {
      ConditionCheck: {
        TableName: table,
        Key: key,
        ConditionExpression: conditions.join(' AND '),
        ExpressionAttributeValues: values,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  }
  values[':neg'] = -returned;
  const add = ['spent :neg'];
  for (const [attr, name, period, lower] of [
    ['spentDay', 'd', counted.day, basis.day],
    ['spentMonth', 'm', counted.month, basis.month],
  ] as const) {
    values[`:${name}`] = period;
    values[':ret'] = returned;
    if (lower) {
      conditions.push(`${attr}.p = :${name} AND ${attr}.v >= :ret`);
      add.push(`${attr}.v :neg`);
    } else {
      // The exact complement: another period now, or a counter holding less than what goes back.
      conditions.push(`(attribute_not_exists(${attr}) OR ${attr}.p <> :${name} OR ${attr}.v < :ret)`);
    }
  }
  return {
    Update: {
      TableName: table,
      Key: key,
      UpdateExpression: `ADD ${add.join(', ')}`,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeValues: values,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}
