/**
 * A charge's items are a function of its decision (store/charges/charge-items.ts), held without DynamoDB:
 * for any policy, grant, hold and amount that decideCharge accepts, the transaction has the
 * marker exactly when the charge is PENDING, the grant's Update exactly under a grant, an outbox
 * item exactly when the payer is asked for approval, money to the agent's shard only when nothing
 * is held, and the payer's debit conditioned on the decision's every running total. The exact
 * items are pinned against DynamoDB Local in test/store/charge-transaction.int.test.ts.
 */
import fc from 'fast-check';
import { chargeAsDecided, decideCharge } from '../../functions/core/charge-decision';
import type { Charge } from '../../functions/core/charges';
import { chargeItems, chargeTransaction } from '../../functions/store/charges/charge-items';
import { chargeEvents } from '../../functions/use-cases/events/events';

const limit = fc.option(fc.integer({ min: 1, max: 10_000 }), { nil: undefined });
const usd = limit.map((l) => (l === undefined ? undefined : { USD: l }));
const terms = fc.record({
  amount: fc.integer({ min: 1, max: 10_000 }),
  daily: usd,
  agentDaily: usd,
  approvalAbove: usd,
  holdSeconds: fc.option(fc.integer({ min: 1, max: 86_400 }), { nil: undefined }),
  grant: fc.option(fc.record({ total: limit, approvalAbove: limit }), { nil: undefined }),
});

const NOW = new Date('2026-11-27T12:00:00.000Z');
const AGENT = 'a01jz00000000000000000000000';

describe('chargeItems', () => {
  it('builds exactly the items the decision calls for', () => {
    fc.assert(
      fc.property(terms, (t) => {
        const policy = {
          ...(t.daily ? { daily: t.daily } : {}),
          ...(t.approvalAbove ? { approvalAbove: t.approvalAbove } : {}),
          ...(t.agentDaily ? { agents: { [AGENT]: { daily: t.agentDaily } } } : {}),
        };
        const grantTerms = t.grant
          ? {
              limits: t.grant.total !== undefined ? { total: t.grant.total } : {},
              ...(t.grant.approvalAbove ? { approvalAbove: t.grant.approvalAbove } : {}),
            }
          : undefined;
        const decision = decideCharge({
          policy,
          agentId: AGENT,
          currency: 'USD',
          amount: t.amount,
          holdSeconds: t.holdSeconds,
          grant: grantTerms,
          now: NOW,
        });
        if (decision.kind !== 'accepted') return;
        const made: Charge = {
          id: `c01jz00000000000000000000000${AGENT}`,
          agentId: AGENT,
          userId: 'u01jz00000000000000000000000',
          idempotencyKey: 'k',
          amount: t.amount,
          currency: 'USD',
          description: 'd',
          status: 'SUCCESS',
          createdAt: NOW.toISOString(),
        };
        const charge = chargeAsDecided(made, decision);
        const items = chargeItems({
          charge,
          decision,
          agentKeyHash: 'agent-hash',
          userKeyHash: grantTerms ? undefined : 'user-hash',
          payer: { policy, policyVersion: 3, day: '2026-11-27', month: '2026-11' },
          grant: grantTerms
            ? {
                grantId: 'g01jz00000000000000000000000',
                userId: made.userId,
                basis: { agentId: AGENT, currency: 'USD', limits: grantTerms.limits },
              }
            : undefined,
          idem: { scope: `${AGENT}#charges`, key: 'k', record: { fingerprint: 'f', statusCode: 201, body: '{}' } },
          events: chargeEvents(charge, {
            now: NOW,
            ...(decision.needsApproval ? { approvalUrl: 'https://x/approve/{approvalToken}' } : {}),
          }),
          now: NOW,
        });
        const held = decision.pending !== undefined;
        expect(charge.status).toBe(held ? 'PENDING' : 'SUCCESS');
        expect(items.pendingMarker !== undefined).toBe(held);
        expect(items.grantSpend !== undefined).toBe(grantTerms !== undefined);
        expect(items.outbox !== undefined).toBe(decision.pending?.reason === 'user_approval');
        const credit = items.agentCredit.item.Update?.ExpressionAttributeValues?.[':amount'];
        expect(credit).toBe(held ? 0 : t.amount);
        const debit = items.payerDebit.item.Update;
        expect(debit?.UpdateExpression?.includes('#held :amount')).toBe(held);
        // Warm counters: every running total of the decision is a condition of the debit, with the room the amount leaves.
        const rooms = Object.entries(debit?.ExpressionAttributeValues ?? {})
          .filter(([name]) => /Room\d+$/.test(name))
          .map(([, room]) => room as number);
        expect(rooms.sort((a, b) => a - b)).toEqual(decision.limits.map((l) => l.limit - t.amount).sort((a, b) => a - b));
        expect(debit?.ConditionExpression?.includes('policyVersion = :v')).toBe(true);
        expect(chargeTransaction(items)).toHaveLength(
          // 4 + the payer's statement entry (docs/statement.md).
          5 + Number(held) + Number(grantTerms !== undefined) + Number(items.outbox !== undefined),
        );
      }),
    );
  });
});
