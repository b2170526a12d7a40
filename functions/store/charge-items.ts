/**
 * The items of a charge's ONE TransactWriteItems, built in one place from the pure decision
 * (core/charge-decision.ts `decideCharge`) and the request's inputs: what each item is, what its
 * condition holds, and what a failure of that condition means (store/transact.ts `named`). The
 * repository (charge.repository.ts) only writes them.
 *
 * An accepted charge (`chargeItems`), SUCCESS, or PENDING (the amount held) when the decision
 * says so; an x402 purchase's hold is one of these:
 *   - `payerDebit`: the user's item, its balance debited (or moved to held), its spend counters
 *     raised, all conditioned on the basis the charge was judged by (the key, the policy version,
 *     the counters' periods, every running total within its limit, enough money, no debt);
 *   - `agentCredit`: one shard of the agent's earned balance credited (nothing while PENDING) and
 *     its charge count bumped, conditioned on the shard's copy of the kill switch being on for this
 *     key (store/balance.repository.ts): no item is shared by all charges of one agent;
 *   - `charge`: the charge written, with the counters it was added to (`Charge.counted`);
 *   - `idempotency`: the idempotency record, the answer (store/idempotency.repository.ts);
 *   - `pendingMarker` (PENDING only): how approve/decline, capture/release find it and the sweeper
 *     expires it (charge-pending.repository.ts);
 *   - `grantSpend` (a grant key's charge): the grant item's counters, conditioned on everything the
 *     grant says (DESIGN §16 "Cost rule");
 *   - `outbox`: only for a charge that asks its payer for approval (its link is not in the item);
 *     every other charge's events come from the charge item's own INSERT stream record (the
 *     dispatcher derives them, use-cases/events.ts `chargeRecordEvents`; DESIGN §18).
 *
 * A refused charge (`refusedChargeItems`) keeps a FAILED record with its idempotency record and
 * moves no money: `agentCount` (the shard counts it, behind the kill switch), `charge`,
 * `idempotency`, `policyCheck` (a refusal by the payer's policy: that policy is still the user's),
 * `grantActive` (a grant key's: the grant is still active), `outbox` (as above).
 *
 * Each item carries what its failed condition means, so the order of the items says nothing; the
 * order below is kept only because it is what the bench's per-item table and the pinned
 * transaction (test/store/charge-transaction.int.test.ts) show.
 */
import { config } from '../config';
import type { AcceptedCharge } from '../core/charge-decision';
import type { Charge } from '../core/charges';
import {
  GrantPeriodsChangedError,
  InsufficientFundsError,
  PayerStateChangedError,
  SpendingLimitError,
  UserKeyRevokedError,
} from '../core/errors';
import { chargeRecordCarriesEvents, type OutboxEvent } from '../core/events';
import type { GrantLimits } from '../core/grants';
import type { IdempotencyWrite } from '../core/idempotency';
import type { Currency, Minor } from '../core/money';
import { type PeriodLimit, periodsOf } from '../core/policy';
import type { PayerState } from '../core/users';
import { randomShard, shardCredit } from './balance.repository';
import { type PendingCharge, pendingOf } from './charge-pending.repository';
import { counterPeriod } from './grant-charge';
import { idempotencyPut } from './idempotency.repository';
import { headroom, readMinor } from './numbers';
import { outboxPut } from './outbox';
import { noDebt } from './owed';
import { agentCounter, heldAttribute, payerStateOf, pruned, type UserUpdate } from './payer';
import { keys } from './table';
import { type NamedItem, named, type OldItem, type TransactEntry, type TransactItem } from './transact';

/** What a grant charge is judged by: the grant's terms, from the key's lookup item. */
export interface GrantChargeBasis {
  agentId: string;
  currency: Currency;
  limits: GrantLimits;
  /** The periods of the grant's counters as last seen (undefined: none yet, or not known). */
  day?: string;
  month?: string;
}

/** A charge made with a grant key: which grant, and what it was judged by. */
export interface GrantCharge {
  grantId: string;
  userId: string;
  basis: GrantChargeBasis;
}

/** An accepted charge to write: the decision, and what it was decided from. */
export interface ChargeWrite {
  /** The charge as answered: PENDING exactly when the decision is (core/charge-decision.ts `chargeAsDecided`). */
  charge: Charge;
  decision: AcceptedCharge;
  /** The agent key's hash: the credited shard's kill switch must be on for it. */
  agentKeyHash: string;
  /** The account key's hash it was authorised with; undefined for a grant key's charge (the grant item's condition decides). */
  userKeyHash: string | undefined;
  /** The payer's state it was judged under (cached): the debit is conditioned on it. */
  payer: PayerState;
  grant?: GrantCharge | undefined;
  idem: IdempotencyWrite;
  /** Its webhook events (use-cases/events.ts); an outbox item only when its record does not carry them. */
  events: readonly OutboxEvent[];
  now: Date;
}

/** The items of an accepted charge's transaction, by what each one is. */
export interface ChargeItems {
  payerDebit: NamedItem;
  agentCredit: NamedItem;
  charge: TransactItem;
  idempotency: NamedItem;
  pendingMarker?: TransactItem;
  grantSpend?: NamedItem;
  outbox?: TransactItem;
}

/** An accepted charge's items, each with what its failed condition means. */
export function chargeItems(write: ChargeWrite): ChargeItems {
  const { decision, agentKeyHash, grant, idem, events, now } = write;
  const hold = decision.pending !== undefined;
  const charge: Charge = { ...write.charge, counted: { ...periodsOf(now), agent: decision.agentCounters } };
  const outbox = chargeOutbox(charge, events, now);
  return {
    payerDebit: payerDebit(charge, write, hold),
    // A PENDING charge is counted in the list's total now; its money reaches the agent on approval.
    agentCredit: shardCredit(charge.agentId, randomShard(), charge.currency, hold ? 0 : charge.amount, {
      countsCharge: true,
      killSwitch: agentKeyHash,
    }),
    charge: chargePut(charge),
    idempotency: idempotencyPut(idem, now),
    ...(hold ? { pendingMarker: pendingMarkerPut(charge) } : {}),
    ...(grant ? { grantSpend: grantSpend(charge, grant, now) } : {}),
    ...(outbox ? { outbox } : {}),
  };
}

/** The transaction of an accepted charge's items. */
export const chargeTransaction = (items: ChargeItems): TransactEntry[] =>
  present([items.payerDebit, items.agentCredit, items.charge, items.idempotency, items.pendingMarker, items.grantSpend, items.outbox]);

/** A refused charge to record (FAILED, its `failureReason` says why). */
export interface RefusedChargeWrite {
  charge: Charge;
  agentKeyHash: string;
  idem: IdempotencyWrite;
  now: Date;
  /**
   * The payer's state a refusal by the payer's policy was judged under: the record is then
   * conditioned on that policy still being the user's (PayerStateChangedError otherwise).
   */
  policyJudged?: PayerState | undefined;
  /** charge.failed: carried by the FAILED charge's own INSERT stream record (no outbox item). */
  events?: readonly OutboxEvent[];
  /** Made with a grant key: the record is conditioned on the grant being active. */
  grant?: { userId: string; grantId: string } | undefined;
}

/** The items of a refused charge's transaction, by what each one is. */
export interface RefusedChargeItems {
  agentCount: NamedItem;
  charge: TransactItem;
  idempotency: NamedItem;
  policyCheck?: NamedItem;
  grantActive?: NamedItem;
  outbox?: TransactItem;
}

/**
 * A refused charge's items: no money moves. The shard write only counts the charge, so the list's
 * `total` includes refusals; a refusal by the payer's policy is conditioned on that policy still
 * being the user's (judged under a stale copy, it is PayerStateChangedError and judged again).
 */
export function refusedChargeItems(write: RefusedChargeWrite): RefusedChargeItems {
  const { charge, agentKeyHash, idem, now, policyJudged, events = [], grant } = write;
  const outbox = chargeOutbox(charge, events, now);
  return {
    // The kill switch too: a disabled agent's refusals are not recorded (AgentDisabledError).
    agentCount: shardCredit(charge.agentId, randomShard(), charge.currency, 0, { countsCharge: true, killSwitch: agentKeyHash }),
    charge: chargePut(charge),
    idempotency: idempotencyPut(idem, now),
    ...(policyJudged ? { policyCheck: policyStillCheck(charge.userId, policyJudged) } : {}),
    ...(grant ? { grantActive: grantActiveCheck(grant, now) } : {}),
    ...(outbox ? { outbox } : {}),
  };
}

/** The transaction of a refused charge's items. */
export const refusedChargeTransaction = (items: RefusedChargeItems): TransactEntry[] =>
  present([items.agentCount, items.charge, items.idempotency, items.policyCheck, items.grantActive, items.outbox]);

const present = (entries: readonly (TransactEntry | undefined)[]): TransactEntry[] =>
  entries.filter((e): e is TransactEntry => e !== undefined);

/**
 * The outbox Put of a new charge's events: none when the charge's INSERT stream record carries
 * them (core/events.ts `chargeRecordCarriesEvents`; the dispatcher derives the same ids and bytes
 * from it), all of them otherwise.
 */
function chargeOutbox(charge: Charge, events: readonly OutboxEvent[], now: Date): TransactItem | undefined {
  return chargeRecordCarriesEvents(charge) ? undefined : outboxPut(events, now);
}

// --- The charge and its marker ---

function chargePut(charge: Charge): TransactItem {
  return {
    Put: {
      TableName: config().TABLE_NAME,
      Item: {
        // No by-id index entry: the id names the agent, so its key is known (core/ids.ts newChargeId).
        ...keys.charge(charge.agentId, charge.id),
        ...keys.userChargeIndex(charge.userId, charge.id),
        ...(charge.purchase ? keys.purchaseIndex(charge.agentId, charge.id) : {}),
        type: 'Charge',
        ...charge,
      },
      ConditionExpression: 'attribute_not_exists(PK)',
    },
  };
}

function pendingMarkerPut(charge: Charge): TransactItem {
  if (!charge.expiresAt || !charge.pendingReason) throw new Error('a PENDING charge needs expiresAt and pendingReason');
  const marker: PendingCharge = pendingOf(charge);
  return {
    Put: {
      TableName: config().TABLE_NAME,
      Item: {
        ...keys.pendingCharge(charge.id),
        ...keys.pendingExpiryIndex(charge.expiresAt, charge.id),
        type: 'PendingCharge',
        ...marker,
      },
      ConditionExpression: 'attribute_not_exists(PK)',
    },
  };
}

// --- The payer's side: one Update of the user's item (its attributes: store/payer.ts) ---

/** How a charge was judged: the basis the payer's debit is conditioned on. */
interface PayerBasis {
  userKeyHash: string | undefined;
  state: PayerState;
  limits: readonly PeriodLimit[];
  /** Keep this agent's own counters (its policy entry has daily/monthly limits). */
  agentCounters: boolean;
  /** PENDING: the amount goes to held instead of leaving the user's side. */
  hold: boolean;
}

/**
 * The user's item debited, named with what its failure means. What the user's item says (revoked
 * key, stale basis, limit, funds) ranks before the shard's cap.
 */
function payerDebit(charge: Charge, write: ChargeWrite, hold: boolean): NamedItem {
  const basis: PayerBasis = {
    userKeyHash: write.userKeyHash,
    state: write.payer,
    limits: write.decision.limits,
    agentCounters: write.decision.agentCounters,
    hold,
  };
  return named(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.user(charge.userId),
        ...chargeUserUpdate(charge.agentId, charge.currency, charge.amount, basis, write.now),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    { onConditionFailed: (old) => chargeRefusal(old, charge.agentId, charge.currency, charge.amount, basis, write.now), precedence: 1 },
  );
}

/**
 * The user item's update for a charge of `amount` by `agentId` at `now`: debits the balance (or
 * moves it to held), adds to the counters, and is conditioned on everything it was judged by:
 * enough funds, the same key, the same policy version, the counters' periods, and every running
 * total staying within its limit. So a limit holds across any number of concurrent charges, with
 * no read: the judgement uses a cached PayerState, and when the cache was wrong the item DynamoDB
 * returns with the failed condition says exactly why (`chargeRefusal`). A counter's period rolls
 * over by replacement: the first charge of a new UTC day SETs a fresh `spendDay` (conditioned on
 * the old one being of another day) instead of adding to it.
 */
function chargeUserUpdate(agentId: string, currency: Currency, amount: Minor, basis: PayerBasis, now: Date): UserUpdate {
  const { day, month } = periodsOf(now);
  const names: Record<string, string> = { '#cur': currency, '#d': 'spendDay', '#m': 'spendMonth', '#ag': agentCounter(currency, agentId) };
  const values: Record<string, unknown> = { ':amount': amount, ':neg': -amount, ':kh': basis.userKeyHash, ':v': basis.state.policyVersion };
  const add: string[] = ['#cur :neg'];
  const set: string[] = [];
  const conditions = [
    'attribute_exists(PK)',
    '#cur >= :amount',
    // The key the charge was authorised with is still this user's (a rotation stops it at once).
    ...(basis.userKeyHash !== undefined ? ['(attribute_not_exists(keyHash) OR keyHash = :kh)'] : []),
    basis.state.policyVersion === 0 ? '(attribute_not_exists(policyVersion) OR policyVersion = :v)' : 'policyVersion = :v',
  ];
  // Issue 19: nothing is charged in a currency the payer owes after a reversal (store/owed.ts);
  // a failure here reads as too little money (chargeRefusal): 402 insufficient balance.
  const debt = noDebt(currency);
  conditions.push(debt.condition);
  Object.assign(names, debt.names);
  Object.assign(values, debt.values);
  if (basis.hold) {
    names['#held'] = heldAttribute(currency);
    add.push('#held :amount');
    conditions.push(`(attribute_not_exists(#held) OR #held <= :headroom)`);
    values[':headroom'] = headroom(amount);
  }
  for (const [attr, key, current, periodValue] of [
    ['#d', 'day', basis.state.day, day],
    ['#m', 'month', basis.state.month, month],
  ] as const) {
    const limits = basis.limits.filter((l) => l.period === key);
    values[`:${key}`] = periodValue;
    if (current === periodValue) {
      // The counters are this period's: add to them, within every limit.
      conditions.push(`${attr}.p = :${key}`);
      add.push(`${attr}.#cur :amount`);
      if (basis.agentCounters) add.push(`${attr}.#ag :amount`);
      limits.forEach((l, i) => {
        const counter = l.scope === 'user' ? `${attr}.#cur` : `${attr}.#ag`;
        values[`:${key}Room${i}`] = l.limit - amount;
        conditions.push(`(attribute_not_exists(${counter}) OR ${counter} <= :${key}Room${i})`);
      });
    } else {
      // A new period (or none yet): replace the counters; the amount alone was checked by judge().
      conditions.push(`(attribute_not_exists(${attr}) OR ${attr}.p <> :${key})`);
      values[`:${key}Fresh`] = {
        p: periodValue,
        [currency]: amount,
        ...(basis.agentCounters ? { [agentCounter(currency, agentId)]: amount } : {}),
      };
      set.push(`${attr} = :${key}Fresh`);
    }
  }
  return pruned({
    UpdateExpression: `ADD ${add.join(', ')}${set.length ? ` SET ${set.join(', ')}` : ''}`,
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  });
}

/**
 * Why the user's part of a charge failed, from the item as it was (ALL_OLD): a revoked key, a
 * stale basis (policy or periods moved: retry with the state attached), a running total past its
 * limit, or too little money — in that order, so a stale judgement is never reported as a refusal.
 */
function chargeRefusal(
  old: Record<string, unknown> | undefined,
  agentId: string,
  currency: Currency,
  amount: Minor,
  basis: PayerBasis,
  now: Date,
): Error {
  if (!old) return new UserKeyRevokedError();
  if (basis.userKeyHash !== undefined && typeof old.keyHash === 'string' && old.keyHash !== basis.userKeyHash)
    return new UserKeyRevokedError();
  const state = payerStateOf(old);
  const { day, month } = periodsOf(now);
  const stale =
    state.policyVersion !== basis.state.policyVersion ||
    (state.day === day) !== (basis.state.day === day) ||
    (state.month === month) !== (basis.state.month === month);
  if (stale) return new PayerStateChangedError(state);
  for (const l of basis.limits) {
    const counters = old[l.period === 'day' ? 'spendDay' : 'spendMonth'] as Record<string, unknown> | undefined;
    const current = (l.period === 'day' ? state.day : state.month) === (l.period === 'day' ? day : month);
    const spent = current && counters ? readMinor(counters, l.scope === 'user' ? currency : agentCounter(currency, agentId)) : 0;
    if (spent + amount > l.limit) return new SpendingLimitError();
  }
  return new InsufficientFundsError();
}

/** A refusal by the payer's policy: recorded only while that policy is still the user's. */
function policyStillCheck(userId: string, judged: PayerState): NamedItem {
  return named(
    {
      ConditionCheck: {
        TableName: config().TABLE_NAME,
        Key: keys.user(userId),
        ConditionExpression:
          judged.policyVersion === 0 ? 'attribute_not_exists(policyVersion) OR policyVersion = :v' : 'policyVersion = :v',
        ExpressionAttributeValues: { ':v': judged.policyVersion },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    { onConditionFailed: (old) => new PayerStateChangedError(payerStateOf(old ?? {})), precedence: 1 },
  );
}

// --- The grant's side (DESIGN §16 "Cost rule"): one Update of the grant item ---
//
// The caller judges with what the grant key's lookup item carries (the grant's terms, which never
// change) and the counter periods it last saw (cached, like the payer's): when the amount alone is
// over a limit it refuses without writing (core/charge-decision.ts `grantLimitRefusal`); otherwise
// this Update's condition decides, exactly, under any concurrency and whatever a container has
// cached. Windows are the UTC calendar day and month (docs/grants.md): `spentDay` / `spentMonth`
// are maps `{p: "2026-01-15" | "2026-01", v: <minor units>}`, rolled over by replacement — the
// first charge of a new period SETs a fresh map, conditioned on the old one being of another
// period (a wrong guess about the period fails the condition; the caller retries with the other).
// A settlement gives a hold back to the grant's counters in its own transaction (grant-charge.ts).

export interface GrantUpdate {
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
}

/**
 * The grant item's Update for a charge of `amount` by `agentId` at `now`: adds the amount to
 * `spent` and to this period's counters, under the condition that the grant is active (not
 * revoked, not past `expiresAt`), is this agent's and this currency's, and every running total
 * stays within its limit.
 */
export function grantChargeUpdate(agentId: string, currency: Currency, amount: Minor, basis: GrantChargeBasis, now: Date): GrantUpdate {
  const { day, month } = periodsOf(now);
  const names: Record<string, string> = { '#cur': 'currency' };
  const values: Record<string, unknown> = { ':amount': amount, ':agent': agentId, ':cur': currency, ':now': now.toISOString() };
  const add = ['spent :amount'];
  const set: string[] = [];
  const conditions = [
    'attribute_exists(PK)',
    // Active: revocation and expiry take effect at once, in every container.
    'attribute_not_exists(revokedAt)',
    '(attribute_not_exists(expiresAt) OR expiresAt > :now)',
    // The grant is this agent's, in this currency.
    'agentId = :agent',
    '#cur = :cur',
    // perCharge is stored on the item: compared there, so no cached copy can be wrong about it.
    '(attribute_not_exists(limits.perCharge) OR limits.perCharge >= :amount)',
  ];
  if (basis.limits.total !== undefined) {
    values[':totalRoom'] = basis.limits.total - amount;
    conditions.push('spent <= :totalRoom');
  }
  for (const [attr, limitName, known, period] of [
    ['spentDay', 'daily', basis.day, day],
    ['spentMonth', 'monthly', basis.month, month],
  ] as const) {
    const limit = basis.limits[limitName];
    const key = limitName === 'daily' ? 'day' : 'month';
    values[`:${key}`] = period;
    if (known === period) {
      // The counter is this period's: add to it, within the limit.
      conditions.push(`${attr}.p = :${key}`);
      add.push(`${attr}.v :amount`);
      if (limit !== undefined) {
        values[`:${key}Room`] = limit - amount;
        conditions.push(`${attr}.v <= :${key}Room`);
      }
    } else {
      // A new period (or none yet): replace the counter; the amount alone was checked by grantLimitRefusal.
      conditions.push(`(attribute_not_exists(${attr}) OR ${attr}.p <> :${key})`);
      values[`:${key}Fresh`] = { p: period, v: amount };
      set.push(`${attr} = :${key}Fresh`);
    }
  }
  return {
    UpdateExpression: `ADD ${add.join(', ')}${set.length ? ` SET ${set.join(', ')}` : ''}`,
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/**
 * Why the grant item refused a charge, from the item as it was (ALL_OLD): gone, revoked or
 * expired → UserKeyRevokedError (401 `invalid user key`, at once); counters of another period than
 * assumed → GrantPeriodsChangedError (another round with the periods it shows); else a limit.
 */
function grantChargeRefusal(old: OldItem | undefined, agentId: string, currency: Currency, basis: GrantChargeBasis, now: Date): Error {
  if (!old || old.revokedAt !== undefined || (typeof old.expiresAt === 'string' && old.expiresAt <= now.toISOString())) {
    return new UserKeyRevokedError();
  }
  // Checked before the write (auth and the use case), from terms that never change: only a bug gets here.
  if (old.agentId !== agentId || old.currency !== currency) return new UserKeyRevokedError();
  const { day, month } = periodsOf(now);
  const shown = { day: counterPeriod(old.spentDay), month: counterPeriod(old.spentMonth) };
  if ((shown.day === day) !== (basis.day === day) || (shown.month === month) !== (basis.month === month)) {
    return new GrantPeriodsChangedError(shown);
  }
  return new SpendingLimitError();
}

/**
 * The grant item's Update, named with what its failure means. It speaks before the user's item
 * (a revoked grant is 401 whatever the balance says).
 */
function grantSpend(charge: { agentId: string; currency: Currency; amount: Minor }, grant: GrantCharge, now: Date): NamedItem {
  return named(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.grant(grant.userId, grant.grantId),
        ...grantChargeUpdate(charge.agentId, charge.currency, charge.amount, grant.basis, now),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    { onConditionFailed: (old) => grantChargeRefusal(old, charge.agentId, charge.currency, grant.basis, now), precedence: 2 },
  );
}

/**
 * A refusal recorded for a grant-key charge (the payer's policy, or a grant limit the amount alone
 * breaks, `grantLimitRefusal`: no grant write) still checks that the grant is active, so a revoked
 * or expired grant's key is 401 `invalid user key` at once, before any other refusal, and nothing
 * is stored (§16).
 */
function grantActiveCheck(grant: { userId: string; grantId: string }, now: Date): NamedItem {
  return named(
    {
      ConditionCheck: {
        TableName: config().TABLE_NAME,
        Key: keys.grant(grant.userId, grant.grantId),
        ConditionExpression:
          'attribute_exists(PK) AND attribute_not_exists(revokedAt) AND (attribute_not_exists(expiresAt) OR expiresAt > :now)',
        ExpressionAttributeValues: { ':now': now.toISOString() },
      },
    },
    { onConditionFailed: () => new UserKeyRevokedError(), precedence: 2 },
  );
}
