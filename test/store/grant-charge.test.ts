/** The grant item's Update for a grant charge (store/charges/grant-charge.ts): what it is conditioned on, and how periods roll over. */
import { grantLimitRefusal } from '../../functions/core/charge-decision';
import { grantChargeUpdate } from '../../functions/store/charges/grant-charge-items';

const NOW = new Date('2026-01-15T09:30:00.000Z');

describe('grantChargeUpdate', () => {
  it('conditions on the grant being active, this agent’s and currency’s, and within every limit of this period', () => {
    const update = grantChargeUpdate(
      'a1',
      'USD',
      100,
      {
        agentId: 'a1',
        currency: 'USD',
        limits: { perCharge: 500, daily: 1000, monthly: 5000, total: 10000 },
        day: '2026-01-15',
        month: '2026-01',
      },
      NOW,
    );
    expect(update.UpdateExpression).toBe('ADD spent :amount, spentDay.v :amount, spentMonth.v :amount');
    expect(update.ConditionExpression.split(' AND ')).toEqual([
      'attribute_exists(PK)',
      'attribute_not_exists(revokedAt)',
      '(attribute_not_exists(expiresAt) OR expiresAt > :now)',
      'agentId = :agent',
      '#cur = :cur',
      '(attribute_not_exists(limits.perCharge) OR limits.perCharge >= :amount)',
      'spent <= :totalRoom',
      'spentDay.p = :day',
      'spentDay.v <= :dayRoom',
      'spentMonth.p = :month',
      'spentMonth.v <= :monthRoom',
    ]);
    expect(update.ExpressionAttributeValues).toEqual({
      ':amount': 100,
      ':agent': 'a1',
      ':cur': 'USD',
      ':now': NOW.toISOString(),
      ':totalRoom': 9900,
      ':day': '2026-01-15',
      ':dayRoom': 900,
      ':month': '2026-01',
      ':monthRoom': 4900,
    });
    expect(update.ExpressionAttributeNames).toEqual({ '#cur': 'currency' });
  });

  it('replaces the counters of another (or no) period instead of adding to them', () => {
    const update = grantChargeUpdate('a1', 'USDC', 7, { agentId: 'a1', currency: 'USDC', limits: { daily: 10 }, day: '2026-01-14' }, NOW);
    expect(update.UpdateExpression).toBe('ADD spent :amount SET spentDay = :dayFresh, spentMonth = :monthFresh');
    expect(update.ConditionExpression).toContain('(attribute_not_exists(spentDay) OR spentDay.p <> :day)');
    expect(update.ConditionExpression).toContain('(attribute_not_exists(spentMonth) OR spentMonth.p <> :month)');
    expect(update.ConditionExpression).not.toContain('spent <=');
    expect(update.ExpressionAttributeValues[':dayFresh']).toEqual({ p: '2026-01-15', v: 7 });
    expect(update.ExpressionAttributeValues[':monthFresh']).toEqual({ p: '2026-01', v: 7 });
  });

  it('uses every name and value it declares (DynamoDB refuses unused ones)', () => {
    for (const limits of [{}, { total: 5 }, { daily: 5, monthly: 9 }]) {
      for (const day of [undefined, '2026-01-15']) {
        const u = grantChargeUpdate(
          'a',
          'USD',
          1,
          { agentId: 'a', currency: 'USD', limits, ...(day ? { day, month: '2026-01' } : {}) },
          NOW,
        );
        const text = `${u.UpdateExpression} ${u.ConditionExpression} `;
        for (const token of [...Object.keys(u.ExpressionAttributeValues), ...Object.keys(u.ExpressionAttributeNames)]) {
          expect(text).toMatch(new RegExp(`${token}(?![A-Za-z0-9_])`));
        }
      }
    }
  });
});

describe('grantLimitRefusal', () => {
  it('names the first limit the amount alone exceeds', () => {
    expect(grantLimitRefusal({ perCharge: 5, total: 3 }, 4)).toBe('total');
    expect(grantLimitRefusal({ perCharge: 5 }, 6)).toBe('perCharge');
    expect(grantLimitRefusal({ daily: 5, monthly: 4 }, 5)).toBe('monthly');
    expect(grantLimitRefusal({}, 1_000_000)).toBeUndefined();
    expect(grantLimitRefusal({ total: 5 }, 5)).toBeUndefined();
  });
});
