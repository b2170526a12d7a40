/** fast-check generators of the values the pure decisions read: an agent's shards, amounts, moments. */
import fc from 'fast-check';
import type { AgentLedger } from '../../functions/core/ledger';
import type { Currency } from '../../functions/core/money';

export const currency = fc.constantFrom<Currency>('USD', 'USDC');

/** A minor amount: mostly small (where the rounding is), sometimes up to a billion units. */
export const minor = fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 1_000_000_000_000 }));

/** An agent's earned balance over 1–16 shards, the total the sum of the shards (as read). */
export const ledger: fc.Arbitrary<AgentLedger> = fc
  .array(fc.record({ USD: minor, USDC: minor }), { minLength: 1, maxLength: 16 })
  .map((shards) => {
    const balances = { USD: 0, USDC: 0 };
    for (const s of shards) {
      balances.USD += s.USD;
      balances.USDC += s.USDC;
    }
    return { balances, charges: 0, shards: shards.map((b, shard) => ({ shard, balances: b, charges: 0 })) };
  });

/** A moment within a few years of 2026, to the millisecond. */
export const moment = fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2029, 0, 1) }).map((ms) => new Date(ms));
