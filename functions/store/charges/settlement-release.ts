/**
 * The payer's give-back in a settlement (settlement-items.ts): the user item's Update that takes a
 * hold out of `held`, returns what the agent did not get to the balance and lowers the spend
 * counters that counted it, and the basis it is conditioned on (assumed first, then as a failed
 * round's item shows it). Apart from the settlement's other items because it is the one condition
 * that is retried with what DynamoDB returned, not refused.
 */
import type { SpendCounted } from '../../core/charges';
import type { Currency, Minor } from '../../core/money';
import { headroom, readMinor } from '../numbers';
import { agentCounter, heldAttribute, pruned, type UserUpdate } from './payer';

/**
 * For each of a charge's periods, which counters that counted it (`SpendCounted`) the release
 * lowers: only while the counters are still of that period (`current`), and each only if it
 * holds at least what goes back (never below zero; see `releaseUserUpdate`).
 */
export interface ReleaseBasis {
  day: PeriodRelease;
  month: PeriodRelease;
}
export interface PeriodRelease {
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
