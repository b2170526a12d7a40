/**
 * What the console's own pages read (DESIGN §21): the same repositories as `/api/v1/users/me`,
 * as domain values for pages to render. Decisions on charges go through payers.ts's
 * approveCharge / declineCharge, exactly as the API's.
 */
import type { Charge } from '../../core/charges';
import type { User } from '../../core/users';
import { refusalText } from '../../messages/catalogue';
import { refuse } from '../../messages/refusal';
import { listUserCharges, listUserChargesSince } from '../../store/charges/charge-read.repository';
import { getUser } from '../../store/identity/user.repository';

/**
 * The most charges the Overview reads, in its one Query of the charges since the chart's window
 * opened (DESIGN §26): a payer with more in that window sees a partial chart, and says so.
 */
export const OVERVIEW_CHARGES = 1000;

/** Whether a charge waits for its payer's decision now (PENDING for `user_approval`, not past its time). */
export const awaitsApproval = (charge: Charge, now: Date): boolean =>
  charge.status === 'PENDING' &&
  charge.pendingReason === 'user_approval' &&
  charge.expiresAt !== undefined &&
  now.toISOString() < charge.expiresAt;

export interface Overview {
  user: User;
  last?: Charge;
  pendingApprovals: number;
  /** The charges read did not reach back far enough to be sure of the count: "at least". */
  pendingAtLeast: boolean;
  /** The payer's charges made since `since`, newest first (what the spend chart is drawn from). */
  recent: Charge[];
  since: Date;
  /** `recent` stopped at OVERVIEW_CHARGES (or 1 MB) before reaching `since`: the chart is partial. */
  partial: boolean;
  /** Among them, one made under a grant was refused by a spending limit in the last day (the Overview's limit notice, DESIGN §27). */
  refusedByLimit?: boolean;
}

/**
 * The Overview: the user item (balances, held, owed) and one Query of the payer's charges since
 * `since` (GSI2's key range by the charge ids' ULID time, at most OVERVIEW_CHARGES): the spend
 * chart, the last activity, and the approvals waiting among them (an approval waits at most 7
 * days, well inside the window) — with the session's read, 3 requests. `since` comes from the
 * chart (console/spend-chart.ts `spendWindowStart`): about two months.
 */
export async function readOverview(userId: string, now: Date, since: Date): Promise<Overview> {
  const [user, page] = await Promise.all([getUser(userId), listUserChargesSince(userId, since, OVERVIEW_CHARGES)]);
  if (!user) throw refuse('userNotFound');
  const pending = page.charges.filter((c) => awaitsApproval(c, now)).length;
  return {
    user,
    ...(page.charges[0] ? { last: page.charges[0] } : {}),
    pendingApprovals: pending,
    pendingAtLeast: page.more,
    recent: page.charges,
    since,
    partial: page.more,
    ...(page.charges.some((c) => refusedByLimit(c, now)) ? { refusedByLimit: true } : {}),
  };
}

const DAY_MS = 86_400_000;
const refusedByLimit = (c: Charge, now: Date) =>
  c.status === 'FAILED' &&
  c.grantId !== undefined &&
  c.failureReason === refusalText('spendingLimitExceeded') &&
  now.getTime() - Date.parse(c.createdAt) < DAY_MS;

/** Charges that wait for the payer's decision, newest first (a bounded read of the PENDING ones). */
export async function listAwaitingApproval(userId: string, now: Date): Promise<{ charges: Charge[]; more: boolean }> {
  const page = await listUserCharges(userId, { limit: 100, status: 'PENDING' });
  return { charges: page.charges.filter((c) => awaitsApproval(c, now)), more: page.lastId !== undefined };
}
