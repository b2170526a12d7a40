/**
 * The payer's item: its attributes, its state, and what gives a PENDING charge's hold back.
 *
 * The user item holds the balances, the money held in PENDING charges (`heldUSD`, `heldUSDC`), the
 * spending policy with its version, the user key's hash, and two spend counters: `spendDay` and
 * `spendMonth`, each a map `{p: <UTC day or month>, USD, USDC, "USD#<agentId>", …}` (an agent's
 * counter only while the policy gives that agent its own daily/monthly limit). A charge's debit of
 * it, conditioned on everything the charge was judged by, is built with the charge's other items
 * (store/charge-items.ts `payerDebit`).
 *
 * Every charge records which counters it was added to (`Charge.counted`, also on its pending
 * marker), and giving its hold back lowers those and no others: an agent's counter that did not
 * exist, or did not count the charge, when the hold was made is never lowered by it.
 */
import type { SpendCounted } from '../core/charges';
import type { Currency, Minor } from '../core/money';
import type { SpendingPolicy } from '../core/policy';
import type { PayerState } from '../core/users';
import { headroom, readMinor } from './numbers';

export const heldAttribute = (currency: Currency): string => `held${currency}`;
/** An agent's own counter inside a period's map (`USD#<agentId>`). */
export const agentCounter = (currency: Currency, agentId: string): string => `${currency}#${agentId}`;

export interface UserUpdate {
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
}

/** DynamoDB refuses names and values an expression does not use: keep only those it does. */
export function pruned(update: UserUpdate): UserUpdate {
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
