/**
 * Properties of a new charge's decision (core/charge-decision.ts, core/policy.ts `judge`): a
 * blocked agent is refused before any limit; an amount over any per-charge, daily or monthly limit
 * of the payer (user-wide or the agent's) or of the grant is refused, and never otherwise; every
 * daily/monthly limit reaches the store as a running total; a PENDING charge never outlives its
 * grant; approval wins over a hold.
 */
import fc from 'fast-check';
import { decideCharge, grantLimitRefusal } from '../../functions/core/charge-decision';
import type { GrantLimits } from '../../functions/core/grants';
import type { Currency } from '../../functions/core/money';
import { DEFAULT_APPROVAL_WINDOW_SECONDS, type Limits, type PolicyRules, type SpendingPolicy } from '../../functions/core/policy';
import { currency, moment } from './ledger-arbitraries';

const amount = fc.integer({ min: 1, max: 100_000 });
const limit = fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: undefined });
const limits: fc.Arbitrary<Limits> = fc.record({ USD: limit, USDC: limit }, { requiredKeys: [] });
const rules: fc.Arbitrary<PolicyRules> = fc.record(
  { perCharge: limits, daily: limits, monthly: limits, approvalAbove: limits },
  { requiredKeys: [] },
);
const policy: fc.Arbitrary<SpendingPolicy> = fc
  .tuple(
    rules,
    fc.option(fc.tuple(rules, fc.boolean()), { nil: undefined }),
    fc.option(fc.integer({ min: 60, max: 86_400 }), { nil: undefined }),
  )
  .map(([user, agent, window]) => ({
    ...user,
    ...(window !== undefined ? { approvalWindowSeconds: window } : {}),
    ...(agent ? { agents: { agt_1: { ...agent[0], blocked: agent[1] } } } : {}),
  }));
const grantLimits: fc.Arbitrary<GrantLimits> = fc.record(
  { perCharge: limit, daily: limit, monthly: limit, total: limit },
  { requiredKeys: [] },
);
const grant = fc.option(
  fc.record({ limits: grantLimits, approvalAbove: limit, expiresInS: fc.option(fc.integer({ min: 1, max: 200_000 }), { nil: undefined }) }),
  { nil: undefined },
);

const overAny = (r: PolicyRules | undefined, cur: Currency, a: number) =>
  [r?.perCharge, r?.daily, r?.monthly].some((l) => l?.[cur] !== undefined && a > (l[cur] as number));

describe('a new charge’s decision (properties)', () => {
  it('refuses exactly what the payer’s rules or the grant’s limits refuse, in the contract’s order', () => {
    fc.assert(
      fc.property(
        policy,
        currency,
        amount,
        grant,
        fc.option(fc.integer({ min: 1, max: 86_400 }), { nil: undefined }),
        moment,
        (p, cur, a, g, hold, now) => {
          const terms = g
            ? {
                limits: g.limits,
                ...(g.approvalAbove !== undefined ? { approvalAbove: g.approvalAbove } : {}),
                ...(g.expiresInS !== undefined ? { expiresAt: new Date(now.getTime() + g.expiresInS * 1000).toISOString() } : {}),
              }
            : undefined;
          const d = decideCharge({
            policy: p,
            agentId: 'agt_1',
            currency: cur,
            amount: a,
            now,
            ...(hold !== undefined ? { holdSeconds: hold } : {}),
            ...(terms ? { grant: terms } : {}),
          });
          const agent = p.agents?.agt_1;
          if (agent?.blocked) return expect(d).toEqual({ kind: 'refused', reason: 'blocked' });
          if (overAny(p, cur, a) || overAny(agent, cur, a)) return expect(d).toEqual({ kind: 'refused', reason: 'over-limit' });
          if (terms && grantLimitRefusal(terms.limits, a)) return expect(d).toEqual({ kind: 'refused', reason: 'grant-over-limit' });
          if (d.kind !== 'accepted') throw new Error(`expected accepted, got ${JSON.stringify(d)}`);
          // Every daily and monthly limit of the currency is a running total the store keeps.
          const expected = [p, ...(agent ? [agent] : [])].flatMap((r) => [r.daily?.[cur], r.monthly?.[cur]]).filter((l) => l !== undefined);
          expect(d.limits.map((l) => l.limit).sort()).toEqual(expected.sort());
          for (const l of d.limits) expect(a).toBeLessThanOrEqual(l.limit);
          const approval =
            [p, agent].some((r) => r?.approvalAbove?.[cur] !== undefined && a > (r.approvalAbove[cur] as number)) ||
            (terms?.approvalAbove !== undefined && a > terms.approvalAbove);
          expect(d.needsApproval).toBe(approval);
          if (!approval && hold === undefined) return expect(d.pending).toBeUndefined();
          expect(d.pending?.reason).toBe(approval ? 'user_approval' : 'capture');
          const natural =
            now.getTime() + (approval ? (p.approvalWindowSeconds ?? DEFAULT_APPROVAL_WINDOW_SECONDS) : (hold as number)) * 1000;
          const end = Date.parse(d.pending?.expiresAt ?? '');
          expect(end).toBe(terms?.expiresAt !== undefined ? Math.min(natural, Date.parse(terms.expiresAt)) : natural);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('a larger amount is never treated better: refused stays refused, approval stays approval', () => {
    fc.assert(
      fc.property(policy, currency, amount, fc.integer({ min: 0, max: 1000 }), grantLimits, moment, (p, cur, a, more, gl, now) => {
        const at = (x: number) => decideCharge({ policy: p, agentId: 'agt_1', currency: cur, amount: x, grant: { limits: gl }, now });
        const small = at(a);
        const large = at(a + more);
        if (small.kind === 'refused') expect(large.kind).toBe('refused');
        if (small.kind === 'accepted' && small.needsApproval && large.kind === 'accepted') expect(large.needsApproval).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
