/**
 * A settlement's items are a function of its decision (core/settlement-decision.ts,
 * store/charges/settlement-items.ts), held without DynamoDB: for any PENDING charge (plain or a hold,
 * under a grant or not, counted by the agent's own counters or not, an x402 purchase or not) and
 * any way it ends, the money the items move adds up to the decision's: the whole hold leaves
 * `held`, `paid` reaches one shard of the agent (never for a purchase), `returned` goes back to the
 * balance and comes off every spend counter that counted it and the grant's `spent` (so a capture
 * moves the grant by exactly what it did not capture), and `paid + returned` is all that was held.
 * A hold's approval moves no money. The exact items are pinned against DynamoDB Local in
 * test/store/settlement-transaction.int.test.ts.
 */
import fc from 'fast-check';
import type { PendingReason } from '../../functions/core/charges';
import { decidePendingSettlement, type Settlement } from '../../functions/core/settlement-decision';
import type { PendingCharge } from '../../functions/store/charges/charge-pending.repository';
import { assumeGrantCounted } from '../../functions/store/charges/grant-settlement-items';
import { settlementItems, settlementTransaction } from '../../functions/store/charges/settlement-items';
import { assumeCounted } from '../../functions/store/charges/settlement-release';
import type { TransactEntry, TransactItem } from '../../functions/store/transact';

const NOW = new Date('2026-11-27T12:00:00.000Z');
const AGENT = 'a01jz00000000000000000000000';
const USER = 'u01jz00000000000000000000000';

/** What an item's `ADD` clause adds, by attribute path (its names resolved). */
function added(item: TransactItem | undefined): Record<string, number> {
  const update = item?.Update;
  const clause = update?.UpdateExpression?.match(/ADD (.*?)(?: SET | REMOVE |$)/)?.[1];
  if (!update || !clause) return {};
  const names = update.ExpressionAttributeNames ?? {};
  const values = update.ExpressionAttributeValues ?? {};
  const out: Record<string, number> = {};
  for (const part of clause.split(', ')) {
    const [path, value] = part.split(' ') as [string, string];
    const resolved = path
      .split('.')
      .map((p) => names[p] ?? p)
      .join('.');
    out[resolved] = values[value] as number;
  }
  return out;
}

const itemOf = (entry: TransactEntry<unknown> | undefined): TransactItem | undefined =>
  entry === undefined ? undefined : 'item' in entry ? entry.item : entry;

const hold = fc.record({
  amount: fc.integer({ min: 1, max: 1_000_000 }),
  holdSeconds: fc.option(fc.integer({ min: 1, max: 86_400 }), { nil: undefined }),
  pendingReason: fc.constantFrom<PendingReason>('user_approval', 'capture'),
  grant: fc.boolean(),
  agentCounted: fc.boolean(),
  purchase: fc.boolean(),
  agentCommand: fc.boolean(),
  captureShare: fc.double({ min: 0, max: 1, noNaN: true }),
  ending: fc.constantFrom('approve', 'capture', 'decline', 'release', 'expire'),
});

describe('settlementItems', () => {
  it('moves exactly the money the decision says, and builds the items it calls for', () => {
    fc.assert(
      fc.property(hold, (h) => {
        const pending: PendingCharge = {
          chargeId: `c01jz00000000000000000000001${AGENT}`,
          agentId: AGENT,
          userId: USER,
          amount: h.amount,
          currency: 'USD',
          createdAt: NOW.toISOString(),
          expiresAt: new Date(NOW.getTime() + 60_000).toISOString(),
          pendingReason: h.pendingReason,
          ...(h.holdSeconds === undefined ? {} : { holdSeconds: h.holdSeconds }),
          counted: { day: '2026-11-27', month: '2026-11', agent: h.agentCounted },
          ...(h.grant ? { grantId: 'g01jz00000000000000000000000' } : {}),
          chargeSharded: true,
        };
        const captured = Math.floor(h.amount * h.captureShare);
        const settlement: Settlement = {
          approve: { kind: 'approve' } as const,
          capture: { kind: 'capture', amount: captured } as const,
          decline: { kind: 'return', status: 'FAILED', failureReason: 'declined', awaiting: 'user_approval' } as const,
          release: { kind: 'return', status: 'FAILED', failureReason: 'released by agent' } as const,
          expire: { kind: 'return', status: 'EXPIRED', failureReason: null } as const,
        }[h.ending];
        const decision = decidePendingSettlement(pending, settlement, { purchase: h.purchase, now: NOW });
        const acts = { approve: 'user_approval', capture: 'capture', decline: 'user_approval' }[h.ending as string];
        expect(decision.kind === 'refused').toBe(acts !== undefined && acts !== h.pendingReason);
        if (decision.kind === 'refused') return;

        const agent = h.agentCommand
          ? { keyHash: 'agent-hash', idem: { scope: `${AGENT}#x`, key: 'k', record: { fingerprint: 'f', statusCode: 200, body: '{}' } } }
          : undefined;
        const items = settlementItems({
          pending,
          settlement,
          decision,
          bases: { user: assumeCounted(pending.counted ?? { day: '', month: '', agent: false }), grant: assumeGrantCounted },
          agent,
          purchase: h.purchase ? {} : undefined,
          events: [],
          now: NOW,
        });
        expect(items.idempotency !== undefined).toBe(h.agentCommand);
        expect(items.outbox).toBeUndefined();
        const charge = itemOf(items.charge)?.Update;
        expect(charge?.ConditionExpression).toContain('#status = :pending AND pendingReason = :reason AND expiresAt = :seen');

        if (decision.kind === 'advance') {
          // A hold's approval: no money moves; the agent's and the grant's standing are only checked.
          expect(h.ending === 'approve' && h.holdSeconds !== undefined).toBe(true);
          expect(items.payerRelease).toBeUndefined();
          expect(itemOf(items.agentShard)?.ConditionCheck).toBeDefined();
          expect(itemOf(items.grant)?.ConditionCheck !== undefined).toBe(h.grant);
          for (const entry of settlementTransaction(items)) expect(added(itemOf(entry))).toEqual({});
          return;
        }

        const { paid, returned, held } = decision;
        expect(held).toBe(h.amount);
        expect(paid + returned).toBe(h.amount);
        expect(paid).toBe(h.ending === 'approve' ? h.amount : h.ending === 'capture' ? captured : 0);

        // The payer: the whole hold leaves held, what goes back reaches the balance and comes off each counter that counted it.
        const payer = added(itemOf(items.payerRelease));
        const expected: Record<string, number> = { heldUSD: -h.amount };
        if (returned > 0) {
          expected.USD = returned;
          for (const period of ['spendDay', 'spendMonth']) {
            expected[`${period}.USD`] = -returned;
            if (h.agentCounted) expected[`${period}.USD#${AGENT}`] = -returned;
          }
        }
        expect(payer).toEqual(expected);

        // The agent: paid to one shard, never for a purchase (its money left by the hot wallet).
        const shard = added(itemOf(items.agentShard));
        const credited = !h.purchase && (paid > 0 || (h.agentCommand && h.ending === 'capture'));
        expect(items.agentShard !== undefined).toBe(credited);
        if (credited) expect(shard).toEqual({ USD: paid });
        // Money conserved: what left held is what the balance and the agent got (a purchase's paid left on chain).
        expect(-(payer.heldUSD ?? 0)).toBe((payer.USD ?? 0) + (h.purchase ? paid : (shard.USD ?? 0)));

        // The grant: spent lowered by what went back (a capture: authorized - captured), its period counters too.
        const grant = itemOf(items.grant);
        if (!h.grant) expect(grant).toBeUndefined();
        else if (returned > 0) expect(added(grant)).toEqual({ spent: -returned, 'spentDay.v': -returned, 'spentMonth.v': -returned });
        else if (decision.paysAgent) expect(grant?.ConditionCheck?.ConditionExpression).toContain('attribute_not_exists(revokedAt)');
        else expect(grant).toBeUndefined();
        // Paying the agent needs the grant active at the time; a give-back alone does not.
        if (grant?.Update) expect(grant.Update.ConditionExpression?.includes('revokedAt')).toBe(decision.paysAgent);

        expect(charge?.ExpressionAttributeValues?.[':status']).toBe(settlement.kind === 'return' ? settlement.status : 'SUCCESS');
        if (settlement.kind === 'capture') {
          expect(charge?.ExpressionAttributeValues?.[':captured']).toBe(captured);
          expect(charge?.ExpressionAttributeValues?.[':authorized']).toBe(h.amount);
        }
        // …and what went back is a row of the payer's statement (docs/statement.md: `hold_release`).
        expect(settlementTransaction(items)).toHaveLength(
          3 +
            Number(h.agentCommand) +
            Number(h.agentCommand && h.ending !== 'capture') +
            Number(credited) +
            Number(grant !== undefined) +
            Number(returned > 0),
        );
      }),
    );
  });
});
