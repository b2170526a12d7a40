/**
 * The payer's side of a charge, as one Update of the user's item inside the charge's transaction.
 *
 * The user item holds the balances, the money held in PENDING charges (`heldUSD`, `heldUSDC`), the
 * spending policy with its version, the user key's hash, and two spend counters: `spendDay` and
 * `spendMonth`, each a map `{p: <UTC day or month>, USD, USDC, "USD#<agentId>", …}` (an agent's
 * counter only while the policy gives that agent its own daily/monthly limit). A charge's update
 * debits the balance (or moves it to held), adds to the counters, and is conditioned on
 * everything it was judged by: enough funds, the same key, the same policy version, the counters'
 * periods, and every running total staying within its limit. So a limit holds across any number of
 * concurrent charges, with no read: the judgement uses a cached PayerState, and when the cache was
 * wrong the item DynamoDB returns with the failed condition says exactly why (`chargeRefusal`).
 *
 * A counter's period rolls over by replacement: the first charge of a new UTC day SETs a fresh
 * `spendDay` (conditioned on the old one being of another day) instead of adding to it.
 *
 * Every charge records which counters it was added to (`Charge.counted`, also on its pending
 * marker), and giving its hold back lowers those and no others: an agent's counter that did not
 * exist, or did not count the charge, when the hold was made is never lowered by it.
 */
import type { SpendCounted } from '../core/charges';
import { InsufficientFundsError, PayerStateChangedError, SpendingLimitError, UserKeyRevokedError } from '../core/errors';
import type { Currency, Minor } from '../core/money';
import { type PeriodLimit, periodsOf, type SpendingPolicy } from '../core/policy';
import type { PayerState } from '../core/users';
import { headroom, readMinor } from './numbers';
import { noDebt } from './owed';

export const heldAttribute = (currency: Currency): string => `held${currency}`;
const agentCounter = (currency: Currency, agentId: string) => `${currency}#${agentId}`;

/** How a charge was judged: the basis its write is conditioned on. */
export interface ChargeBasis {
  /** The account key's hash; undefined for a grant key's charge (the grant item's condition decides, store/grant-charge.ts). */
  userKeyHash: string | undefined;
  state: PayerState;
  limits: readonly PeriodLimit[];
  /** Keep this agent's own counters (its policy entry has daily/monthly limits). */
  agentCounters: boolean;
  /** PENDING: the amount goes to held instead of leaving the user's side. */
  hold: boolean;
}

export interface UserUpdate {
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
}

/** The user item's update for a charge of `amount` by `agentId` at `now`. */
export function chargeUserUpdate(agentId: string, currency: Currency, amount: Minor, basis: ChargeBasis, now: Date): UserUpdate {
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

/** The counters `chargeUserUpdate` adds a charge to, for the charge's record (`Charge.counted`). */
export function countedBy(basis: ChargeBasis, now: Date): SpendCounted {
  return { ...periodsOf(now), agent: basis.agentCounters };
}

/** DynamoDB refuses names and values an expression does not use: keep only those it does. */
function pruned(update: UserUpdate): UserUpdate {
  const text = `${update.UpdateExpression} ${update.ConditionExpression} `;
  const used = (token: string) => new RegExp(`${token}(?![A-Za-z0-9_])`).test(text);
  return {
    ...update,
    ExpressionAttributeNames: Object.fromEntries(Object.entries(update.ExpressionAttributeNames).filter(([k]) => used(k))),
    ExpressionAttributeValues: Object.fromEntries(Object.entries(update.ExpressionAttributeValues).filter(([k]) => used(k))),
  };
}

/** The payer state an item shows. */
export function payerStateOf(item: Record<string, unknown>): PayerState {
  const period = (name: string) => {
    const counters = item[name];
    return counters && typeof counters === 'object' && typeof (counters as { p?: unknown }).p === 'string'
      ? (counters as { p: string }).p
      : undefined;
  };
  return {
    policy: (item.policy as SpendingPolicy | undefined) ?? {},
    policyVersion: typeof item.policyVersion === 'number' ? item.policyVersion : 0,
    day: period('spendDay'),
    month: period('spendMonth'),
  };
}

/**
 * Why the user's part of a charge failed, from the item as it was (ALL_OLD): a revoked key, a
 * stale basis (policy or periods moved: retry with the state attached), a running total past its
 * limit, or too little money — in that order, so a stale judgement is never reported as a refusal.
 */
export function chargeRefusal(
  old: Record<string, unknown> | undefined,
  agentId: string,
  currency: Currency,
  amount: Minor,
  basis: ChargeBasis,
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
