/**
 * Where the payer's money went (DESIGN §26), as numbers and geometry: pure, no reads, no clock of
 * its own, so every rule is unit-tested (test/console/spend-chart.test.ts) and the Overview only
 * draws what this computes.
 *
 * The rule (docs/console.md, "Where money went"): spend is money that left the balance for good —
 * a SUCCESS charge's captured amount (an x402 purchase is a charge too: SUCCESS once settled), less
 * what refunds gave back of it, counted on the day the charge was made, in the payer's time zone
 * (UTC when the browser gave none). A hold still PENDING, a FAILED or EXPIRED charge is no spend.
 * Amounts stay integer minor units until they are written as text.
 */
import type { Charge } from '../core/charges';
import { CURRENCIES, type Currency, DECIMALS, formatAmount, type Minor } from '../core/money';

/** How many days the chart shows, ending today. */
export const CHART_DAYS = 30;
/** How many agents get their own colour; the rest are `Others`. */
export const TOP_AGENTS = 5;
export const OTHERS = 'others';

const DAY_MS = 86_400_000;
/** No time zone is further than this from UTC: a local midnight is never earlier than UTC's minus this. */
const MAX_ZONE_OFFSET_MS = 14 * 3_600_000;

/** A charge's spend: what left the balance for good (see the file's comment). */
export function netSpend(charge: Pick<Charge, 'status' | 'amount' | 'refundedAmount'>): Minor {
  if (charge.status !== 'SUCCESS') return 0;
  return Math.max(0, charge.amount - (charge.refundedAmount ?? 0));
}

/** `YYYY-MM-DD` of an instant in a time zone. */
export function dayKeyIn(zone: string): (instant: Date | string) => string {
  const format = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' });
  return (instant) => format.format(typeof instant === 'string' ? new Date(instant) : instant);
}

/** A day key `n` days after `key` (calendar arithmetic on the date alone). */
export function addDays(key: string, n: number): string {
  return new Date(Date.parse(`${key}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
}

/** `YYYY-MM` of the month before `month`. */
export function previousMonth(month: string): string {
  const [y = 0, m = 1] = month.split('-').map(Number);
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, '0')}`;
}

/**
 * The earliest instant the Overview must read for the chart and the months: the first of last
 * month or the chart's first day, whichever is earlier, at its local midnight — taken as that
 * date's UTC midnight less the largest zone offset, so no zone's charge is missed (the few read
 * before it are left out by their day).
 */
export function spendWindowStart(now: Date, zone: string): Date {
  const today = dayKeyIn(zone)(now);
  const chartStart = addDays(today, -(CHART_DAYS - 1));
  const lastMonthStart = `${previousMonth(today.slice(0, 7))}-01`;
  const first = chartStart < lastMonthStart ? chartStart : lastMonthStart;
  return new Date(Date.parse(`${first}T00:00:00Z`) - MAX_ZONE_OFFSET_MS);
}

export interface Series {
  /** The agent's id, or OTHERS. */
  key: string;
  name: string;
  /** Spend in the chart's window. */
  total: Minor;
  /** Spend per chart day, oldest first. */
  perDay: Minor[];
}

export interface CurrencySpend {
  currency: Currency;
  /** The chart's day keys, oldest first (CHART_DAYS of them, the last is today). */
  days: string[];
  /** The top agents by spend in the window, biggest first, then `Others` when any spend is theirs. */
  series: Series[];
  /** Each day's spend over every series. */
  dayTotals: Minor[];
  /** The window's spend. */
  total: Minor;
  /** This calendar month so far; last month whole; last month up to today's day of the month. */
  months: { thisMonth: string; lastMonth: string; thisMonthSpend: Minor; lastMonthSpend: Minor; lastMonthToDay: Minor };
}

export interface SpendSummary {
  /** Each currency with any spend in the window or the two months, in CURRENCIES order. */
  currencies: CurrencySpend[];
  /** Charges older than this day may be missing (the read was capped); undefined when complete. */
  completeFrom?: string;
}

/**
 * Spend per currency, per day and agent: the top TOP_AGENTS agents by the window's spend (ties by
 * name) and the rest as `Others`, with this month against last month. `partial`: the read stopped
 * before the window's start; the days from the oldest charge read on are complete.
 */
export function summarizeSpend(
  /** Newest first, as the Overview reads them. */
  charges: readonly Pick<Charge, 'status' | 'amount' | 'refundedAmount' | 'currency' | 'agentId' | 'agentName' | 'createdAt'>[],
  opts: { now: Date; zone: string; partial?: boolean },
): SpendSummary {
  const dayOf = dayKeyIn(opts.zone);
  const today = dayOf(opts.now);
  const days = Array.from({ length: CHART_DAYS }, (_, i) => addDays(today, i - (CHART_DAYS - 1)));
  const index = new Map(days.map((d, i) => [d, i]));
  const thisMonth = today.slice(0, 7);
  const lastMonth = previousMonth(thisMonth);
  const dayOfMonth = today.slice(8, 10);
  const currencies: CurrencySpend[] = [];
  for (const currency of CURRENCIES) {
    const byAgent = new Map<string, { name: string; perDay: Minor[]; total: Minor }>();
    let thisMonthSpend = 0;
    let lastMonthSpend = 0;
    let lastMonthToDay = 0;
    for (const c of charges) {
      if (c.currency !== currency) continue;
      const spend = netSpend(c);
      if (spend === 0) continue;
      const day = dayOf(c.createdAt);
      if (day.startsWith(thisMonth)) thisMonthSpend += spend;
      if (day.startsWith(lastMonth)) {
        lastMonthSpend += spend;
        if (day.slice(8, 10) <= dayOfMonth) lastMonthToDay += spend;
      }
      const i = index.get(day);
      if (i === undefined) continue;
      const agent = byAgent.get(c.agentId) ?? { name: c.agentName ?? c.agentId, perDay: days.map(() => 0), total: 0 };
      agent.perDay[i] = (agent.perDay[i] ?? 0) + spend;
      agent.total += spend;
      byAgent.set(c.agentId, agent);
    }
    const ranked = [...byAgent.entries()]
      .map(([key, a]) => ({ key, ...a }))
      .sort((a, b) => b.total - a.total || a.name.localeCompare(b.name) || a.key.localeCompare(b.key));
    const series: Series[] = ranked.slice(0, TOP_AGENTS);
    const rest = ranked.slice(TOP_AGENTS);
    if (rest.length > 0) {
      series.push({
        key: OTHERS,
        name: rest.length === 1 ? 'Others (1 agent)' : `Others (${rest.length} agents)`,
        total: rest.reduce((sum, a) => sum + a.total, 0),
        perDay: days.map((_, i) => rest.reduce((sum, a) => sum + (a.perDay[i] ?? 0), 0)),
      });
    }
    const dayTotals = days.map((_, i) => series.reduce((sum, s) => sum + (s.perDay[i] ?? 0), 0));
    const total = dayTotals.reduce((a, b) => a + b, 0);
    if (total === 0 && thisMonthSpend === 0 && lastMonthSpend === 0) continue;
    currencies.push({
      currency,
      days,
      series,
      dayTotals,
      total,
      months: { thisMonth, lastMonth, thisMonthSpend, lastMonthSpend, lastMonthToDay },
    });
  }
  const oldest = charges.at(-1);
  return { currencies, ...(opts.partial && oldest ? { completeFrom: dayOf(oldest.createdAt) } : {}) };
}

/** An amount in a currency's units without the currency, at least two decimals, exact: `12.50`, `0.000001`. */
export function units(minor: Minor, currency: Currency): string {
  const [whole, fraction = ''] = formatAmount(minor, currency).split('.');
  return `${whole}.${fraction.padEnd(2, '0')}`;
}

/**
 * The value axis: a round step (1, 2 or 5 times a power of ten, in minor units) with at most
 * `most` steps up to the tallest day, and the tick values from 0 to the top. Nothing spent: one
 * step of the currency's unit, so an empty chart still has an axis.
 */
export function axisTicks(max: Minor, currency: Currency, most = 4): { step: Minor; top: Minor; values: Minor[] } {
  let step = 1;
  if (max <= 0) step = 10 ** DECIMALS[currency];
  else {
    for (let power = 1; ; power *= 10) {
      const found = [1, 2, 5].map((m) => m * power).find((s) => Math.ceil(max / s) <= most);
      if (found !== undefined) {
        step = found;
        break;
      }
    }
  }
  const steps = Math.max(1, Math.ceil(max / step));
  return { step, top: step * steps, values: Array.from({ length: steps + 1 }, (_, i) => i * step) };
}

/** The chart's drawing box, in the SVG's own units (the viewBox; CSS scales it to the column). */
export const CHART_BOX = { width: 400, height: 220, right: 8, top: 24, bottom: 26 } as const;

/** The labels' size in the SVG's units (13: about 10 px on a phone, 14 px at 1280 px), and a digit's width in it. */
export const CHART_FONT = 13;
const DIGIT_WIDTH = 7.6;

/** A tick's label: the amount in the currency's units, no trailing zeros (`2.5`, `60`, `0.000005`). */
export const tickLabel = (minor: Minor, currency: Currency): string => formatAmount(minor, currency);

export interface Bar {
  day: number;
  series: number;
  x: number;
  y: number;
  width: number;
  height: number;
  amount: Minor;
}

export interface ChartGeometry {
  bars: Bar[];
  /** Horizontal grid lines with their labels, bottom up. */
  ticks: { y: number; label: string }[];
  /** Day labels under the axis: the first day, every 7th after it, and today. */
  dayLabels: { x: number; label: string; day: number }[];
  plot: { x: number; y: number; width: number; height: number };
}

const round = (n: number) => Math.round(n * 100) / 100;

/**
 * Rectangles for each day's stack (series bottom up in their order), the ticks and the day labels.
 * A segment too thin to see still gets 0.5 units, so a small spend is not invisible; the stack's
 * height stays that of the day's total (segments are placed from the scaled running sums).
 */
export function chartGeometry(spend: CurrencySpend, dayLabel: (key: string) => string): ChartGeometry {
  const { width, height, right, top, bottom } = CHART_BOX;
  const axis = axisTicks(Math.max(0, ...spend.dayTotals), spend.currency);
  const labels = axis.values.map((v) => tickLabel(v, spend.currency));
  // The plot starts where the longest tick label ends.
  const left = Math.ceil(Math.max(...labels.map((l) => l.length)) * DIGIT_WIDTH + 8);
  const plot = { x: left, y: top, width: width - left - right, height: height - top - bottom };
  const slot = plot.width / spend.days.length;
  const barWidth = round(slot * 0.72);
  const scale = (v: Minor) => (v / axis.top) * plot.height;
  const baseline = plot.y + plot.height;
  const bars: Bar[] = [];
  spend.days.forEach((_, day) => {
    let below = 0;
    spend.series.forEach((s, series) => {
      const amount = s.perDay[day] ?? 0;
      if (amount === 0) return;
      const y0 = baseline - scale(below);
      below += amount;
      const y1 = baseline - scale(below);
      const h = Math.max(0.5, y0 - y1);
      bars.push({
        day,
        series,
        x: round(plot.x + slot * day + (slot - barWidth) / 2),
        y: round(y0 - h),
        width: barWidth,
        height: round(h),
        amount,
      });
    });
  });
  const ticks = axis.values.map((v, i) => ({ y: round(baseline - scale(v)), label: labels[i] ?? '' }));
  const last = spend.days.length - 1;
  const labelled = spend.days.map((_, i) => i).filter((i) => (i % 7 === 0 && last - i >= 4) || i === last);
  const dayLabels = labelled.map((i) => ({ x: round(plot.x + slot * i + slot / 2), label: dayLabel(spend.days[i] ?? ''), day: i }));
  return { bars, ticks, dayLabels, plot };
}

/** "12 Nov" for a day key (the zone is already in the key). */
export function shortDay(key: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short' }).format(new Date(`${key}T00:00:00Z`));
}

/** "November 2026" for a month key. */
export function monthName(month: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', month: 'long', year: 'numeric' }).format(new Date(`${month}-01T00:00:00Z`));
}
