/**
 * What this container last saw of each payer (policy, version, spend periods), so a warm charge
 * is judged without a read. Never trusted for correctness: every charge is conditioned on it, and
 * a charge whose condition fails brings the current state back (PayerStateChangedError).
 */
import { onConfigReset } from '../../config';
import { TtlCache } from '../../core/ttl-cache';
import type { PayerState } from '../../core/users';
import { readPayerState } from '../../store/identity/user.repository';

const STATE_TTL_MS = 10 * 60_000;
let cache = new TtlCache<PayerState>(STATE_TTL_MS, 10_000);
onConfigReset(() => {
  cache = new TtlCache<PayerState>(STATE_TTL_MS, 10_000);
});

/**
 * The payer's state as last seen, or read once when this container has not seen the payer (a
 * cold charge: one strongly consistent GetItem of a few attributes; a guess would cost a failed
 * transaction whenever it was wrong, which is dearer).
 */
export async function payerState(userId: string): Promise<PayerState> {
  const known = cache.get(userId);
  if (known) return known;
  const read = await readPayerState(userId);
  if (read) cache.set(userId, read);
  return read ?? { policy: {}, policyVersion: 0, day: undefined, month: undefined };
}

/** The state as this container knows it, without reading (undefined when unknown). */
export function knownPayerState(userId: string): PayerState | undefined {
  return cache.get(userId);
}

/** Forgets every payer, as a new container would (tests and the benchmarks' cold requests). */
export function forgetPayers(): void {
  cache = new TtlCache<PayerState>(STATE_TTL_MS, 10_000);
  grantPeriodCache = new TtlCache<GrantPeriods>(STATE_TTL_MS, 10_000);
}

export function rememberPayer(userId: string, state: PayerState): void {
  cache.set(userId, state);
}

/**
 * The periods of each grant's counters as this container last saw them (store/charges/charge-items.ts `grantSpend`):
 * like the payer's, never trusted for correctness (the grant item's condition checks them, and a
 * wrong guess brings the item's periods back: GrantPeriodsChangedError).
 */
type GrantPeriods = { hour?: string; day?: string; month?: string };
let grantPeriodCache = new TtlCache<GrantPeriods>(STATE_TTL_MS, 10_000);
onConfigReset(() => {
  grantPeriodCache = new TtlCache<GrantPeriods>(STATE_TTL_MS, 10_000);
});

export function grantPeriods(grantId: string): GrantPeriods {
  return grantPeriodCache.get(grantId) ?? {};
}

export function rememberGrantPeriods(grantId: string, periods: GrantPeriods): void {
  grantPeriodCache.set(grantId, periods);
}
