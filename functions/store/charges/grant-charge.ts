/**
 * Reading a grant item's counters and state. A charge made with a grant key spends the grant in
 * its own transaction (store/charges/charge-items.ts `grantSpend`); a settlement gives a hold back to the
 * grant's counters in its own (store/charges/settlement-items.ts `grantSettleItem`), and refuses to pay
 * the agent under a revoked or ended grant (`grantInactiveError` says which).
 *
 * The grant item's period counters `spentDay` / `spentMonth` are maps `{p: "2026-01-15" |
 * "2026-01", v: <minor units>}` (docs/grants.md), rolled over by replacement.
 */
import { GrantExpiredError, GrantRevokedError } from '../../core/errors';
import type { OldItem } from '../transact';

/** The period (`p`) of a grant counter map, if it is one. */
export const counterPeriod = (counter: unknown): string | undefined =>
  counter !== null && typeof counter === 'object' && typeof (counter as { p?: unknown }).p === 'string'
    ? (counter as { p: string }).p
    : undefined;

/**
 * Why a grant item (as it was, ALL_OLD) refused a settlement that pays the agent at `at`:
 * GrantRevokedError, GrantExpiredError, or undefined when it is active (another condition failed).
 */
export function grantInactiveError(old: OldItem | undefined, at: Date): Error | undefined {
  if (!old) return undefined;
  if (old.revokedAt !== undefined) return new GrantRevokedError();
  if (typeof old.expiresAt === 'string' && old.expiresAt <= at.toISOString()) return new GrantExpiredError();
  return undefined;
}
