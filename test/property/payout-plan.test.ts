/**
 * Properties of the withdrawal's decision (core/payout-plan.ts): gross = fee + account-creation
 * fee + net to the minor unit; the fees of a run of withdrawals total 3% (half up) of what they
 * withdrew, however it is split (never undercut by splitting); nothing is paid that leaves the net
 * at zero or below; the debit is exactly the gross and each shard holds its part.
 */
import fc from 'fast-check';
import { cumulativeFee, type FeeBasis, NO_FEE_BASIS, platformFee } from '../../functions/core/fees';
import { planWithdrawal } from '../../functions/core/payout-plan';
import { currency, ledger } from './ledger-arbitraries';

const gross = fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 10_000_000_000 }));
const creationFee = fc.constantFrom(0, 0, 2_039_280, 1);

/** A basis as the store keeps it: fees are 3% (half up) of what was withdrawn. */
const basis: fc.Arbitrary<FeeBasis> = fc
  .integer({ min: 0, max: 10_000_000_000 })
  .map((withdrawn) => ({ withdrawn, feesPaid: platformFee(withdrawn).fee }));

describe('withdrawal plan (properties)', () => {
  it('splits gross exactly into fee, account-creation fee and a positive net, and debits exactly the gross', () => {
    fc.assert(
      fc.property(ledger, currency, gross, creationFee, basis, (l, cur, g, acf, b) => {
        const d = planWithdrawal({ ledger: l, currency: cur, gross: g, accountCreationFee: acf, basis: b });
        const fee = cumulativeFee(b, g);
        if (g - fee - acf <= 0) {
          expect(d).toEqual({ kind: 'refused', reason: 'too-small' });
          return;
        }
        if (l.balances[cur] < g) {
          expect(d).toEqual({ kind: 'refused', reason: 'insufficient' });
          return;
        }
        if (d.kind !== 'plan') throw new Error(`expected a plan, got ${JSON.stringify(d)}`);
        expect(d.fees.fee + d.fees.accountCreationFee + d.fees.net).toBe(g);
        expect(d.fees.net).toBeGreaterThan(0);
        expect(d.fees.accountCreationFee).toBe(acf);
        expect(d.debits.reduce((sum, p) => sum + p.amount, 0)).toBe(g);
        for (const p of d.debits) expect(p.amount).toBeLessThanOrEqual(l.shards[p.shard]?.balances[cur] ?? -1);
      }),
      { numRuns: 1000 },
    );
  });

  it('a run of withdrawals pays 3% (half up) of their sum, never less than one withdrawal of the whole', () => {
    const rich = {
      balances: { USD: 2 ** 50, USDC: 2 ** 50 },
      charges: 0,
      shards: [{ shard: 0, balances: { USD: 2 ** 50, USDC: 2 ** 50 }, charges: 0 }],
    };
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 100_000 }), { minLength: 1, maxLength: 20 }), (grosses) => {
        let b: FeeBasis = NO_FEE_BASIS;
        for (const g of grosses) {
          const d = planWithdrawal({ ledger: rich, currency: 'USD', gross: g, basis: b });
          if (d.kind !== 'plan') continue;
          b = { withdrawn: b.withdrawn + g, feesPaid: b.feesPaid + d.fees.fee };
        }
        expect(b.feesPaid).toBe(platformFee(b.withdrawn).fee);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses for fees before it looks at the balance (the contract’s order)', () => {
    const empty = { balances: { USD: 0, USDC: 0 }, charges: 0, shards: [{ shard: 0, balances: { USD: 0, USDC: 0 }, charges: 0 }] };
    expect(planWithdrawal({ ledger: empty, currency: 'USDC', gross: 100, accountCreationFee: 2_039_280 })).toEqual({
      kind: 'refused',
      reason: 'too-small',
    });
    expect(planWithdrawal({ ledger: empty, currency: 'USD', gross: 100 })).toEqual({ kind: 'refused', reason: 'insufficient' });
  });
});
