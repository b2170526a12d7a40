/**
 * The grant's part of a charge made with a grant key (DESIGN §16 "Cost rule"): ONE Update of the
 * grant item inside the charge's TransactWriteItems, conditioned on everything the grant says, so
 * a revoked or expired grant, another agent, another currency and every limit are refused by
 * DynamoDB itself, exactly, under any concurrency and whatever a container has cached. Pure: it
 * builds the expression; the charge path (a later change) adds it to its transaction.
 *
 * The caller judges with what the grant key's lookup item carries (the grant's terms, which never
 * change) and the counter periods it last saw (cached, like the payer's): when the amount alone is
 * over a limit it refuses without writing (`grantLimitRefusal`); otherwise this Update's condition
 * decides. Windows are the UTC calendar day and month (docs/grants.md): `spentDay` / `spentMonth`
 * are maps `{p: "2026-01-15" | "2026-01", v: <minor units>}`, rolled over by replacement — the
 * first charge of a new period SETs a fresh map, conditioned on the old one being of another
 * period (a wrong guess about the period fails the condition; the caller retries with the other).
 */
import type { GrantLimits } from '../core/grants';
import type { Currency, Minor } from '../core/money';
import { periodsOf } from '../core/policy';

/** What a grant charge is judged by: the grant's terms, from the key's lookup item. */
export interface GrantChargeBasis {
  agentId: string;
  currency: Currency;
  limits: GrantLimits;
  /** The periods of the grant's counters as last seen (undefined: none yet, or not known). */
  day?: string;
  month?: string;
}

export interface GrantUpdate {
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
}

/** Which limit the amount alone exceeds (no counter needed), or undefined. */
export function grantLimitRefusal(limits: GrantLimits, amount: Minor): keyof GrantLimits | undefined {
  for (const name of ['perCharge', 'daily', 'monthly', 'total'] as const) {
    const limit = limits[name];
    if (limit !== undefined && amount > limit) return name;
  }
  return undefined;
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
