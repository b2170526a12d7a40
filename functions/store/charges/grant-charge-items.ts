/**
 * The grant's side of a charge's transaction (charge-items.ts; DESIGN §16 "Cost rule"): one Update
 * of the grant item, its counters raised under every condition the grant sets, and the reading of
 * its failure; and a refused grant-key charge's check that the grant is still active. Apart from
 * the payer's side because a grant is judged by its own terms and its own counters.
 */
import { config } from '../../config';
import { GrantPeriodsChangedError, SpendingLimitError, UserKeyRevokedError } from '../../core/errors';
import { refusingLimit } from '../../core/grant-alerts';
import { type GrantLimits, hourOf } from '../../core/grants';
import type { Currency, Minor } from '../../core/money';
import { periodsOf } from '../../core/policy';
import { toGrant } from '../identity/grant.mapper';
import { keys } from '../table';
import { type NamedItem, named, type OldItem } from '../transact';
import { counterPeriod } from './grant-charge';

/** What a grant charge is judged by: the grant's terms, from the key's lookup item. */
export interface GrantChargeBasis {
  agentId: string;
  currency: Currency;
  limits: GrantLimits;
  /** The periods of the grant's counters as last seen (undefined: none yet, or not known). */
  hour?: string;
  day?: string;
  month?: string;
}

/** A charge made with a grant key: which grant, and what it was judged by. */
export interface GrantCharge {
  grantId: string;
  userId: string;
  basis: GrantChargeBasis;
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
  const hour = hourOf(now);
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
  for (const [attr, limitName, known, period, key] of grantWindows(basis, { hour, day, month })) {
    const limit = basis.limits[limitName];
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
 * The grant's window counters a charge adds to: the UTC day and month always (as before hourly
 * limits were), the UTC hour only on a grant with an hourly limit (DESIGN §27), so a grant without
 * one writes exactly what it always did. The hour's presence never changes: limits never change.
 */
function grantWindows(basis: GrantChargeBasis, periods: { hour: string; day: string; month: string }) {
  return [
    ...(basis.limits.hourly !== undefined ? [['spentHour', 'hourly', basis.hour, periods.hour, 'hour'] as const] : []),
    ['spentDay', 'daily', basis.day, periods.day, 'day'] as const,
    ['spentMonth', 'monthly', basis.month, periods.month, 'month'] as const,
  ];
}

/**
 * Why the grant item refused a charge, from the item as it was (ALL_OLD): gone, revoked or
 * expired → UserKeyRevokedError (401 `invalid user key`, at once); counters of another period than
 * assumed → GrantPeriodsChangedError (another round with the periods it shows); else a limit.
 */
function grantChargeRefusal(
  old: OldItem | undefined,
  charge: { agentId: string; currency: Currency; amount: Minor },
  basis: GrantChargeBasis,
  now: Date,
): Error {
  const { agentId, currency, amount } = charge;
  if (!old || old.revokedAt !== undefined || (typeof old.expiresAt === 'string' && old.expiresAt <= now.toISOString())) {
    return new UserKeyRevokedError();
  }
  // Checked before the write (auth and the use case), from terms that never change: only a bug gets here.
  if (old.agentId !== agentId || old.currency !== currency) return new UserKeyRevokedError();
  const { day, month } = periodsOf(now);
  const hour = hourOf(now);
  const shown = { hour: counterPeriod(old.spentHour), day: counterPeriod(old.spentDay), month: counterPeriod(old.spentMonth) };
  const hourWrong = basis.limits.hourly !== undefined && (shown.hour === hour) !== (basis.hour === hour);
  if (hourWrong || (shown.day === day) !== (basis.day === day) || (shown.month === month) !== (basis.month === month)) {
    return new GrantPeriodsChangedError(shown);
  }
  // Which of the grant's limits refused it, for its alert (core/grant-alerts.ts): read from the item as it was.
  return new SpendingLimitError(refusingLimit(basis.limits, toGrant(old), amount, now));
}

/**
 * The grant item's Update, named with what its failure means. It speaks before the user's item
 * (a revoked grant is 401 whatever the balance says).
 */
export function grantSpend(charge: { agentId: string; currency: Currency; amount: Minor }, grant: GrantCharge, now: Date): NamedItem {
  return named(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.grant(grant.userId, grant.grantId),
        ...grantChargeUpdate(charge.agentId, charge.currency, charge.amount, grant.basis, now),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    { onConditionFailed: (old) => grantChargeRefusal(old, charge, grant.basis, now), precedence: 2 },
  );
}

/**
 * A refusal recorded for a grant-key charge (the payer's policy, or a grant limit the amount alone
 * breaks, `grantLimitRefusal`: no grant write) still checks that the grant is active, so a revoked
 * or expired grant's key is 401 `invalid user key` at once, before any other refusal, and nothing
 * is stored (§16).
 */
export function grantActiveCheck(grant: { userId: string; grantId: string }, now: Date): NamedItem {
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
