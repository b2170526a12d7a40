/**
 * What this container last saw of each payer (policy, version, spend periods), so a warm charge
 * is judged without a read. Never trusted for correctness: every charge is conditioned on it, and
 * a charge whose condition fails brings the current state back (PayerStateChangedError).
 */
import { onConfigReset } from '../config';
import { periodsOf } from '../core/policy';
import { TtlCache } from '../core/ttl-cache';
import type { PayerState } from '../core/users';

const STATE_TTL_MS = 10 * 60_000;
let cache = new TtlCache<PayerState>(STATE_TTL_MS, 10_000);
onConfigReset(() => {
  cache = new TtlCache<PayerState>(STATE_TTL_MS, 10_000);
});

/**
 * The payer's state as last seen; for a payer not seen yet, the likeliest one: no policy and
 * counters of the current periods (an active payer's). A wrong guess costs one retry.
 */
export function payerState(userId: string, now: Date): PayerState {
  const known = cache.get(userId);
  if (known) return known;
  const { day, month } = periodsOf(now);
  return { policy: {}, policyVersion: 0, day, month };
}

export function rememberPayer(userId: string, state: PayerState): void {
  cache.set(userId, state);
}
