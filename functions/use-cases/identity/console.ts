/**
 * What the console's own pages read (DESIGN §21): the same repositories as `/api/v1/users/me`,
 * as domain values for pages to render. Decisions on charges go through payers.ts's
 * approveCharge / declineCharge, exactly as the API's.
 */
import type { Charge } from '../../core/charges';
import type { User } from '../../core/users';
import { refusalText } from '../../messages/catalogue';
import { refuse } from '../../messages/refusal';
import { listUserCharges } from '../../store/charges/charge-read.repository';
import { getUser } from '../../store/identity/user.repository';

/** How many of the newest charges the Overview reads: its one Query. */
export const OVERVIEW_CHARGES = 50;

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
  /** The newest charges did not reach back far enough to be sure of the count: "at least". */
  pendingAtLeast: boolean;
  /** Among them, one made under a grant was refused by a spending limit in the last day (the Overview's limit notice, DESIGN §27). */
  refusedByLimit?: boolean;
}

/**
 * The Overview: the user item (balances, held, owed) and one Query of the newest charges (the last
 * activity, and the approvals waiting among them) — with the session's read, 3 requests.
 */
export async function readOverview(userId: string, now: Date): Promise<Overview> {
  const [user, page] = await Promise.all([getUser(userId), listUserCharges(userId, { limit: OVERVIEW_CHARGES })]);
  if (!user) throw refuse('userNotFound');
  const pending = page.charges.filter((c) => awaitsApproval(c, now)).length;
  return {
    user,
    ...(page.charges[0] ? { last: page.charges[0] } : {}),
    pendingApprovals: pending,
    pendingAtLeast: page.lastId !== undefined && page.charges.length >= OVERVIEW_CHARGES,
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
