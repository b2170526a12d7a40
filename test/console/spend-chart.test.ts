/** Where money went (console/spend-chart.ts): the spend rule, days in the payer's zone, top agents and Others, the axis, the geometry. */

import {
  addDays,
  axisTicks,
  CHART_BOX,
  chartGeometry,
  netSpend,
  OTHERS,
  previousMonth,
  spendWindowStart,
  summarizeSpend,
  units,
} from '../../functions/console/spend-chart';
import type { Charge } from '../../functions/core/charges';

type Row = Pick<Charge, 'status' | 'amount' | 'refundedAmount' | 'currency' | 'agentId' | 'agentName' | 'createdAt'>;
const now = new Date('2026-11-29T10:00:00Z');
const row = (over: Partial<Row>): Row => ({
  status: 'SUCCESS',
  amount: 100,
  currency: 'USD',
  agentId: 'a1',
  agentName: 'One',
  createdAt: '2026-11-29T09:00:00Z',
  ...over,
});

describe('the spend rule', () => {
  it('counts what left the balance for good: SUCCESS less refunds; holds, failures and expiries are no spend', () => {
    expect(netSpend(row({ amount: 500 }))).toBe(500);
    expect(netSpend(row({ amount: 500, refundedAmount: 200 }))).toBe(300);
    expect(netSpend(row({ amount: 500, refundedAmount: 500 }))).toBe(0);
    for (const status of ['PENDING', 'FAILED', 'EXPIRED'] as const) expect(netSpend(row({ status }))).toBe(0);
  });
});

describe('days and months', () => {
  it('does calendar arithmetic on day keys', () => {
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(previousMonth('2026-01')).toBe('2025-12');
    expect(previousMonth('2026-11')).toBe('2026-10');
  });

  it('reads from the first of last month or the chart’s first day, whichever is earlier, with every zone’s margin', () => {
    // 29 Nov: last month starts 1 Oct, earlier than 31 Oct.
    expect(spendWindowStart(now, 'UTC').toISOString()).toBe('2026-09-30T10:00:00.000Z');
    // 1 Mar: the chart's first day (31 Jan) is earlier than 1 Feb.
    expect(spendWindowStart(new Date('2026-03-01T12:00:00Z'), 'UTC').toISOString()).toBe('2026-01-30T10:00:00.000Z');
  });

  it('puts a charge on its day in the payer’s zone', () => {
    const late = row({ createdAt: '2026-11-28T23:30:00Z' });
    const utc = summarizeSpend([late], { now, zone: 'UTC' }).currencies[0];
    const tokyo = summarizeSpend([late], { now, zone: 'Asia/Tokyo' }).currencies[0];
    expect(utc?.days.at(-1)).toBe('2026-11-29');
    expect(utc?.dayTotals.at(-2)).toBe(100);
    expect(tokyo?.dayTotals.at(-1)).toBe(100);
  });
});

describe('summarizeSpend', () => {
  it('stacks the top five agents by spend and the rest as Others, per currency; this month against last month', () => {
    const charges: Row[] = [];
    for (let i = 1; i <= 7; i++) {
      charges.push(row({ agentId: `a${i}`, agentName: `Agent ${i}`, amount: i * 100, createdAt: '2026-11-20T12:00:00Z' }));
    }
    charges.push(row({ agentId: 'a7', agentName: 'Agent 7', amount: 50, createdAt: '2026-10-15T12:00:00Z' }));
    charges.push(row({ agentId: 'a7', agentName: 'Agent 7', amount: 70, createdAt: '2026-10-30T12:00:00Z' }));
    charges.push(row({ currency: 'USDC', amount: 1, createdAt: '2026-11-01T00:00:00Z' }));
    charges.push(row({ status: 'PENDING', amount: 9999 }));
    const { currencies, completeFrom } = summarizeSpend(charges, { now, zone: 'UTC' });
    expect(completeFrom).toBeUndefined();
    expect(currencies.map((c) => c.currency)).toEqual(['USD', 'USDC']);
    const usd = currencies[0];
    if (!usd) throw new Error('no USD');
    expect(usd.days).toHaveLength(30);
    expect(usd.days[0]).toBe('2026-10-31');
    expect(usd.series.map((s) => s.name)).toEqual(['Agent 7', 'Agent 6', 'Agent 5', 'Agent 4', 'Agent 3', 'Others (2 agents)']);
    expect(usd.series[5]?.key).toBe(OTHERS);
    expect(usd.series[5]?.total).toBe(300);
    // 30 Oct is outside the 30 days (31 Oct to 29 Nov); 15 Oct too.
    expect(usd.series[0]?.total).toBe(700);
    expect(usd.total).toBe(2800);
    expect(usd.months).toEqual({
      thisMonth: '2026-11',
      lastMonth: '2026-10',
      thisMonthSpend: 2800,
      lastMonthSpend: 120,
      // Up to the 29th: 15 Oct, not 30 Oct.
      lastMonthToDay: 50,
    });
  });

  it('says from which day a capped read is complete (charges come newest first)', () => {
    const charges = [row({ createdAt: '2026-11-29T01:00:00Z' }), row({ createdAt: '2026-11-10T01:00:00Z' })];
    expect(summarizeSpend(charges, { now, zone: 'UTC', partial: true }).completeFrom).toBe('2026-11-10');
  });

  it('has nothing to show without spend', () => {
    expect(summarizeSpend([row({ status: 'FAILED' })], { now, zone: 'UTC' }).currencies).toEqual([]);
  });
});

describe('the chart', () => {
  it('picks a round step, at most four of them, in minor units', () => {
    expect(axisTicks(2800, 'USD')).toEqual({ step: 1000, top: 3000, values: [0, 1000, 2000, 3000] });
    expect(axisTicks(401, 'USD')).toEqual({ step: 200, top: 600, values: [0, 200, 400, 600] });
    expect(axisTicks(0, 'USD')).toEqual({ step: 100, top: 100, values: [0, 100] });
    expect(axisTicks(3, 'USDC').step).toBe(1);
    expect(units(1000, 'USD')).toBe('10.00');
    expect(units(1, 'USDC')).toBe('0.000001');
    expect(units(2_500_000, 'USDC')).toBe('2.50');
  });

  it('stacks each day’s segments bottom up to the day’s total, inside the plot', () => {
    const charges = [
      row({ agentId: 'a1', agentName: 'One', amount: 1000 }),
      row({ agentId: 'a2', agentName: 'Two', amount: 500 }),
      row({ agentId: 'a2', agentName: 'Two', amount: 1, createdAt: '2026-11-01T12:00:00Z' }),
    ];
    const usd = summarizeSpend(charges, { now, zone: 'UTC' }).currencies[0];
    if (!usd) throw new Error('no USD');
    const g = chartGeometry(usd, (d) => d);
    const today = g.bars.filter((b) => b.day === 29);
    expect(today.map((b) => b.amount)).toEqual([1000, 500]);
    const [bottom, top] = today;
    const baseline = g.plot.y + g.plot.height;
    expect((bottom?.y ?? 0) + (bottom?.height ?? 0)).toBeCloseTo(baseline, 1);
    expect((top?.y ?? 0) + (top?.height ?? 0)).toBeCloseTo(bottom?.y ?? 0, 1);
    // 15.00 on an axis of steps of 5.00: the whole plot.
    expect(baseline - (top?.y ?? 0)).toBeCloseTo(g.plot.height, 1);
    // A cent is still seen.
    expect(g.bars.find((b) => b.amount === 1)?.height).toBeGreaterThanOrEqual(0.5);
    for (const b of g.bars) {
      expect(b.x).toBeGreaterThanOrEqual(g.plot.x);
      expect(b.x + b.width).toBeLessThanOrEqual(CHART_BOX.width);
    }
    expect(g.ticks.map((t) => t.label)).toEqual(['0', '5', '10', '15']);
    expect(g.dayLabels.map((d) => d.label)).toEqual(['2026-10-31', '2026-11-07', '2026-11-14', '2026-11-21', '2026-11-29']);
  });
});
