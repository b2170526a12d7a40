/**
 * Properties of the charge lifecycle's decisions (core/lifecycle.ts): a capture never takes more
 * than was held and gives back exactly the rest; nothing is captured or released once the hold
 * ran out; refunds never pass the charge's amount, however they are split, and their debit is
 * always the shards' to give.
 */
import fc from 'fast-check';
import type { ChargeStatus } from '../../functions/core/charges';
import { decideCapture, decideRefund, decideRelease, decideSettlement, refundableLeft } from '../../functions/core/lifecycle';
import { currency, ledger, minor, moment } from './ledger-arbitraries';

const hold = fc.record({
  amount: fc.integer({ min: 1, max: 1_000_000_000 }),
  /** Relative to now, in ms: negative has run out. */
  endsIn: fc.integer({ min: -86_400_000, max: 86_400_000 }),
  pendingReason: fc.constantFrom('capture' as const, 'user_approval' as const, undefined),
});

describe('capture and release (properties)', () => {
  it('captures at most what was held; what goes back is exactly the rest', () => {
    fc.assert(
      fc.property(hold, fc.option(minor, { nil: undefined }), moment, (h, requested, now) => {
        const expiresAt = new Date(now.getTime() + h.endsIn).toISOString();
        const d = decideCapture({ amount: h.amount, expiresAt, pendingReason: h.pendingReason }, requested, now);
        if (d.kind === 'capture') {
          expect(d.authorized).toBe(h.amount);
          expect(d.captured).toBe(requested ?? h.amount);
          expect(d.captured).toBeLessThanOrEqual(d.authorized);
          expect(d.authorized - d.captured).toBeGreaterThanOrEqual(0);
          expect(h.endsIn).toBeGreaterThan(0);
          expect(h.pendingReason).not.toBe('user_approval');
        } else if (requested !== undefined && requested > h.amount) {
          expect(d.reason).toBe('exceeds-authorized');
        } else if (h.endsIn <= 0) {
          expect(d.reason).toBe('expired');
        } else {
          expect(d.reason).toBe('awaits-approval');
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses a hold at the very millisecond it ends, and has no end taken as ended', () => {
    fc.assert(
      fc.property(moment, (now) => {
        expect(decideRelease({ amount: 1, expiresAt: now.toISOString() }, now)).toEqual({ kind: 'refused', reason: 'expired' });
        expect(decideRelease({ amount: 1 }, now)).toEqual({ kind: 'refused', reason: 'expired' });
        expect(decideCapture({ amount: 1 }, undefined, now)).toEqual({ kind: 'refused', reason: 'expired' });
        const later = new Date(now.getTime() + 1).toISOString();
        expect(decideRelease({ amount: 1, expiresAt: later }, now)).toEqual({ kind: 'release' });
      }),
    );
  });

  it('an over-large capture is refused as such even on a hold that ran out (the contract’s order)', () => {
    const now = new Date('2026-11-27T10:00:00Z');
    expect(decideCapture({ amount: 100, expiresAt: '2026-11-27T09:00:00.000Z' }, 101, now)).toEqual({
      kind: 'refused',
      reason: 'exceeds-authorized',
    });
  });
});

const charge = fc.record({
  status: fc.constantFrom<ChargeStatus>('SUCCESS', 'SUCCESS', 'SUCCESS', 'PENDING', 'FAILED', 'EXPIRED'),
  amount: fc.integer({ min: 1, max: 1_000_000_000 }),
  refundedShare: fc.double({ min: 0, max: 1, noNaN: true }),
  currency,
});

describe('refund (properties)', () => {
  it('never refunds more than is left, nor nothing; a debit plan that sums to the refund and that each shard holds', () => {
    fc.assert(
      fc.property(charge, ledger, fc.option(minor, { nil: undefined }), (c, l, requested) => {
        const refundedAmount = Math.floor(c.amount * c.refundedShare);
        const read = { status: c.status, amount: c.amount, refundedAmount, currency: c.currency };
        let asked = false;
        const d = decideRefund(read, l, () => {
          asked = true;
          return requested;
        });
        const left = c.amount - refundedAmount;
        if (c.status !== 'SUCCESS') {
          expect(d).toEqual({ kind: 'refused', reason: 'not-refundable' });
          // The amount's text is not read for a charge that cannot be refunded (409 before 400).
          expect(asked).toBe(false);
          return;
        }
        const amount = requested ?? left;
        if (amount > left || amount === 0) {
          expect(d).toEqual({ kind: 'refused', reason: 'exceeds-refundable' });
          return;
        }
        if (l.balances[c.currency] < amount) {
          expect(d).toEqual({ kind: 'short' });
          return;
        }
        if (d.kind !== 'refund') throw new Error(`expected a refund, got ${JSON.stringify(d)}`);
        expect(d.amount).toBe(amount);
        expect(d.plan.reduce((sum, p) => sum + p.amount, 0)).toBe(amount);
        for (const p of d.plan) {
          expect(p.amount).toBeGreaterThan(0);
          expect(p.amount).toBeLessThanOrEqual(l.shards[p.shard]?.balances[c.currency] ?? -1);
        }
        expect(new Set(d.plan.map((p) => p.shard)).size).toBe(d.plan.length);
      }),
      { numRuns: 1000 },
    );
  });

  it('refunds applied one after another never total more than the charge', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.array(fc.option(minor, { nil: undefined }), { maxLength: 12 }),
        (amount, asks) => {
          const rich = {
            balances: { USD: 2 ** 40, USDC: 2 ** 40 },
            charges: 0,
            shards: [{ shard: 0, balances: { USD: 2 ** 40, USDC: 2 ** 40 }, charges: 0 }],
          };
          let refundedAmount = 0;
          for (const ask of asks) {
            const d = decideRefund({ status: 'SUCCESS', amount, refundedAmount, currency: 'USD' }, rich, () => ask);
            if (d.kind === 'refund') refundedAmount += d.amount;
            expect(refundedAmount).toBeLessThanOrEqual(amount);
            expect(refundableLeft({ amount, refundedAmount })).toBeGreaterThanOrEqual(0);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('settle (properties)', () => {
  it('only the expiry ends a charge past its end; the payer ends only what waits for them, unless releasing any hold', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -86_400_000, max: 86_400_000 }),
        fc.constantFrom('capture' as const, 'user_approval' as const),
        fc.boolean(),
        fc.boolean(),
        moment,
        (endsIn, reason, expiry, anyReason, now) => {
          const pending = { expiresAt: new Date(now.getTime() + endsIn).toISOString(), pendingReason: reason };
          const d = decideSettlement(pending, { expiry, anyReason }, now);
          if (!expiry && endsIn <= 0) return expect(d).toEqual({ kind: 'refused', reason: 'expired' });
          if (reason !== 'user_approval' && !anyReason) return expect(d).toEqual({ kind: 'refused', reason: 'not-pending' });
          expect(d).toEqual({ kind: 'settle' });
        },
      ),
      { numRuns: 500 },
    );
  });
});
