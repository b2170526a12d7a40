/**
 * The payer's side of a charge's transaction (charge-items.ts): one Update of the user's item (its
 * attributes: store/charges/payer.ts), conditioned on everything the charge was judged by, and the reading
 * of its failure; and a refused charge's check that the payer's policy is still the one it was
 * refused under. Apart from the charge's other items because it is the part that holds limits and
 * money under concurrency, and has its own refusal order.
 */
import { config } from '../../config';
import type { Charge } from '../../core/charges';
import { InsufficientFundsError, PayerStateChangedError, SpendingLimitError, UserKeyRevokedError } from '../../core/errors';
import type { Currency, Minor } from '../../core/money';
import { type PeriodLimit, periodsOf } from '../../core/policy';
import type { PayerState } from '../../core/users';
import { headroom, readMinor } from '../numbers';
import { keys } from '../table';
import { noDebt } from '../topups/owed';
import { type NamedItem, named } from '../transact';
import { agentCounter, heldAttribute, payerStateOf, pruned, type UserUpdate } from './payer';

/** How a charge was judged: the basis the payer's debit is conditioned on. */
export interface PayerBasis {
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
export function payerDebit(charge: Charge, basis: PayerBasis, now: Date): NamedItem {
  return named(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.user(charge.userId),
        ...chargeUserUpdate(charge.agentId, charge.currency, charge.amount, basis, now),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    { onConditionFailed: (old) => chargeRefusal(old, charge.agentId, charge.currency, charge.amount, basis, now), precedence: 1 },
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
  // Issue 19: nothing is charged in a currency the payer owes after a reversal (store/topups/owed.ts);
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
export function policyStillCheck(userId: string, judged: PayerState): NamedItem {
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
