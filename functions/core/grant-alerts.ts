/**
 * Limit alerts (DESIGN §27, docs/webhooks.md "Grant limit alerts"): `grant.limit.approaching` once
 * per limit window when a charge or purchase brings the window's spend to at least 80% of a grant
 * limit, `grant.limit.reached` once per window when one is refused by a grant limit. Pure: which
 * window a limit is in at a time, how much of it a grant has spent, and which alerts a change of
 * the grant item's counters (old → new, as the table's stream shows it) crosses into.
 *
 * The windowed limits are `hourly`, `daily`, `monthly` (their UTC periods) and `total` (the grant's
 * whole life: window `total`). `perCharge` is no budget that fills up: a charge over it is refused
 * with no alert.
 */
import { type Grant, type GrantLimits, hourOf } from './grants';
import type { Minor } from './money';
import { periodsOf } from './policy';

export type AlertLimit = 'hourly' | 'daily' | 'monthly' | 'total';
export const ALERT_LIMITS: readonly AlertLimit[] = ['hourly', 'daily', 'monthly', 'total'];
export type AlertType = 'grant.limit.approaching' | 'grant.limit.reached';

/** The window `total` lives in: the grant's whole life. */
export const LIFETIME_WINDOW = 'total';

/** At or above 80% of a limit: `spent / limit >= 4/5`, in integers. */
export const approaching = (spent: Minor, limit: Minor): boolean => spent * 5 >= limit * 4;

/** The window of `limit` at `at`: the UTC hour (`2026-01-15T10`), day, month, or `total`. */
export function windowOf(limit: AlertLimit, at: Date): string {
  if (limit === 'hourly') return hourOf(at);
  if (limit === 'total') return LIFETIME_WINDOW;
  const { day, month } = periodsOf(at);
  return limit === 'daily' ? day : month;
}

type Counters = Pick<Grant, 'spent' | 'spentHour' | 'spentDay' | 'spentMonth'>;

/** What the grant has spent in `window` of `limit` (0 when its counter is of another period). */
export function spentInWindow(grant: Counters, limit: AlertLimit, window: string): Minor {
  if (limit === 'total') return grant.spent;
  const counter = limit === 'hourly' ? grant.spentHour : limit === 'daily' ? grant.spentDay : grant.spentMonth;
  return counter?.p === window ? counter.v : 0;
}

/** The window a counter of `limit` is in now (its `p`), or `total`; undefined when it has none yet. */
function currentWindow(grant: Counters, limit: AlertLimit): string | undefined {
  if (limit === 'total') return LIFETIME_WINDOW;
  return (limit === 'hourly' ? grant.spentHour : limit === 'daily' ? grant.spentDay : grant.spentMonth)?.p;
}

export interface LimitAlert {
  type: AlertType;
  limit: AlertLimit;
  window: string;
  /** What the window has spent (approaching: after the charge that crossed). */
  spent: Minor;
  /** The limit's amount. */
  max: Minor;
}

/**
 * The `approaching` alerts a change of the grant's counters crosses into: a window whose spend went
 * from below 80% of its limit to at least 80%. A give-back (a release) lowers spend and crosses
 * nothing; the counters not moving (a revocation, an alert's own marker) cross nothing.
 */
export function approachingAlerts(before: Counters | undefined, after: Pick<Grant, 'limits'> & Counters): LimitAlert[] {
  const alerts: LimitAlert[] = [];
  for (const limit of ALERT_LIMITS) {
    const max = after.limits[limit];
    const window = currentWindow(after, limit);
    if (max === undefined || window === undefined) continue;
    const now = spentInWindow(after, limit, window);
    const then = before ? spentInWindow(before, limit, window) : 0;
    if (approaching(now, max) && !approaching(then, max)) alerts.push({ type: 'grant.limit.approaching', limit, window, spent: now, max });
  }
  return alerts;
}

/**
 * Which grant limit refuses a charge of `amount` at `at`, given the grant's counters as they were:
 * the first in the order a refusal names them (perCharge, the hour, day, month, the lifetime).
 * Undefined when none would (another condition failed).
 */
export function refusingLimit(limits: GrantLimits, counters: Counters, amount: Minor, at: Date): keyof GrantLimits | undefined {
  if (limits.perCharge !== undefined && amount > limits.perCharge) return 'perCharge';
  for (const limit of ALERT_LIMITS) {
    const max = limits[limit];
    if (max !== undefined && spentInWindow(counters, limit, windowOf(limit, at)) + amount > max) return limit;
  }
  return undefined;
}

/** A refusal's alert marker on the refused charge (`Charge.grantLimit`): which windowed limit, and its window; none for perCharge. */
export function refusedLimitMark(limit: keyof GrantLimits | undefined, at: Date): { limit: AlertLimit; window: string } | undefined {
  if (limit === undefined || limit === 'perCharge') return undefined;
  return { limit, window: windowOf(limit, at) };
}

/** The grant item's attribute that records the last window an alert of `type` on `limit` was sent for (the once-per-window marker). */
export const alertMarker = (type: AlertType, limit: AlertLimit): string =>
  `alert${type === 'grant.limit.approaching' ? 'Approaching' : 'Reached'}${limit[0]?.toUpperCase()}${limit.slice(1)}`;
