/**
 * What the console's own pages read (DESIGN §21): the same repositories as `/api/v1/users/me`,
 * as domain values for pages to render. Decisions on charges go through payers.ts's
 * approveCharge / declineCharge, exactly as the API's.
 */
import type { Charge } from '../../core/charges';
import type { User } from '../../core/users';
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
  };
}

/** Charges that wait for the payer's decision, newest first (a bounded read of the PENDING ones). */
export async function listAwaitingApproval(userId: string, now: Date): Promise<{ charges: Charge[]; more: boolean }> {
  const page = await listUserCharges(userId, { limit: 100, status: 'PENDING' });
  return { charges: page.charges.filter((c) => awaitsApproval(c, now)), more: page.lastId !== undefined };
}
