/**
 * The Overview's "Where money went" (DESIGN §26): per currency, a server-rendered SVG of spend per
 * day over the last 30 days stacked by agent (no script: the CSP allows none inline, and a chart
 * needs none), its legend, this month against last month, and the same numbers as a table. The SVG
 * is an image with a title and a one-line summary for screen readers; the table is where they read
 * every number. Geometry and numbers come from console/spend-chart.ts; this file only writes markup.
 */
import { html, type SafeHtml } from '../../http/html';
import { OVERVIEW_CHARGES } from '../../use-cases/identity/console';
import { zoneOf } from '../format';
import {
  CHART_BOX,
  CHART_DAYS,
  CHART_FONT,
  type CurrencySpend,
  chartGeometry,
  monthName,
  OTHERS,
  type SpendSummary,
  shortDay,
  units,
} from '../spend-chart';

/** A series' colour class: s0…s4 for the top agents, `so` for Others (http/style.ts CHART_CSS). */
const colour = (key: string, index: number) => (key === OTHERS ? 'so' : `s${index}`);

export function spendSection(summary: SpendSummary, session: { timeZone?: string | undefined }): SafeHtml {
  const zone = zoneOf(session);
  return html`<section aria-labelledby="spend-h"><h2 id="spend-h">Where money went</h2>
${
  summary.currencies.length === 0
    ? html`<p class="empty">No spend in the last ${CHART_DAYS} days. When agents charge you or buy with your grants, a chart of where the money went appears here.</p>`
    : html`<p class="hint">Spend per day over the last ${CHART_DAYS} days, by agent: captured charges and x402 purchases, less refunds, on the day each charge was made (${zone === 'UTC' ? 'UTC days' : `days in ${zone}`}).</p>
${
  summary.completeFrom &&
  html`<p class="notice" role="status">You have more than ${OVERVIEW_CHARGES.toLocaleString('en-GB')} charges in this period: the chart counts the newest ${OVERVIEW_CHARGES.toLocaleString('en-GB')}, so days before ${shortDay(summary.completeFrom)} and last month may show less than you spent. The <a href="/console/statement">Statement</a> lists every movement.</p>`
}
<div class="charts">${summary.currencies.map((c) => currencyChart(c, summary.completeFrom))}</div>`
}
</section>`;
}

function currencyChart(spend: CurrencySpend, completeFrom: string | undefined): SafeHtml {
  const id = `spend-${spend.currency.toLowerCase()}`;
  const { currency, months } = spend;
  const amount = (minor: number) => `${units(minor, currency)} ${currency}`;
  const lastIncomplete = completeFrom !== undefined && completeFrom > `${months.lastMonth}-01`;
  const [year = 0, month = 1] = months.lastMonth.split('-').map(Number);
  // 30 March against February: its days 1–28 (or 29).
  const dayOfMonth = Math.min(Number(spend.days.at(-1)?.slice(8, 10) ?? 1), new Date(Date.UTC(year, month, 0)).getUTCDate());
  return html`<div class="card chart" id="${id}">
<h3>${currency}</h3>
<div class="chart-body">
<dl class="facts months">
<dt>This month</dt><dd>${amount(months.thisMonthSpend)} <span class="muted">(${monthName(months.thisMonth)}, so far)</span></dd>
<dt>Same days last month</dt><dd>${amount(months.lastMonthToDay)} <span class="muted">(${dayOfMonth === 1 ? '' : '1–'}${dayOfMonth} ${monthName(months.lastMonth)}${lastIncomplete ? ', partial' : ''})</span> ${trend(months.thisMonthSpend, months.lastMonthToDay)}</dd>
<dt>Last month</dt><dd>${amount(months.lastMonthSpend)} <span class="muted">(all of ${monthName(months.lastMonth)}${lastIncomplete ? ', partial' : ''})</span></dd>
</dl>
${spend.total === 0 ? html`<p class="muted">No ${currency} spend in the last ${CHART_DAYS} days.</p>` : chart(spend, id)}
</div>
</div>`;
}

/** This month so far against last month by the same day, in words (never colour alone). */
function trend(now: number, before: number): SafeHtml {
  if (before === 0) return html``;
  const change = Math.round(((now - before) / before) * 100);
  if (change === 0) return html`<span class="muted">· this month is the same</span>`;
  return html`<span class="muted">· this month is ${Math.abs(change)}% ${change > 0 ? 'higher' : 'lower'}</span>`;
}

function chart(spend: CurrencySpend, id: string): SafeHtml {
  const { currency } = spend;
  const g = chartGeometry(spend, shortDay);
  const first = spend.days[0] ?? '';
  const today = spend.days.at(-1) ?? '';
  const busiest = spend.dayTotals.reduce((best, v, i) => (v > (spend.dayTotals[best] ?? 0) ? i : best), 0);
  const summary = `${units(spend.total, currency)} ${currency} in ${CHART_DAYS} days; the most on ${shortDay(spend.days[busiest] ?? '')}: ${units(spend.dayTotals[busiest] ?? 0, currency)} ${currency}. The table below has every day.`;
  const svg = html`<svg class="chart-svg" viewBox="0 0 ${CHART_BOX.width} ${CHART_BOX.height}" role="img" aria-labelledby="${id}-title ${id}-desc" focusable="false">
<title id="${id}-title">Spend per day in ${currency}, ${shortDay(first)} to ${shortDay(today)}, by agent</title>
<desc id="${id}-desc">${summary}</desc>
<text class="axis-unit" x="2" y="${CHART_FONT}">${currency}</text>
${g.ticks.map(
  (t) =>
    html`<line class="grid" x1="${g.plot.x}" x2="${g.plot.x + g.plot.width}" y1="${t.y}" y2="${t.y}"></line><text class="tick" x="${g.plot.x - 4}" y="${t.y + CHART_FONT * 0.35}" text-anchor="end">${t.label}</text>`,
)}
${g.bars.map((b) => {
  const s = spend.series[b.series];
  return html`<rect class="${colour(s?.key ?? '', b.series)}" x="${b.x}" y="${b.y}" width="${b.width}" height="${b.height}"><title>${shortDay(spend.days[b.day] ?? '')} · ${s?.name ?? ''}: ${units(b.amount, currency)} ${currency}</title></rect>`;
})}
${g.dayLabels.map((d) => html`<text class="tick" x="${d.x}" y="${CHART_BOX.height - 6}" text-anchor="${d.day === spend.days.length - 1 ? 'end' : d.day === 0 ? 'start' : 'middle'}">${d.label}</text>`)}
</svg>`;
  const legend = html`<ul class="legend" aria-label="Agents in the ${currency} chart">
${spend.series.map(
  (s, i) =>
    html`<li><span class="swatch ${colour(s.key, i)}" aria-hidden="true"></span><span class="wrap">${s.name}</span> <span class="muted">${units(s.total, currency)}</span></li>`,
)}
</ul>`;
  return html`${svg}${legend}${numbers(spend)}`;
}

/** The chart as a table: each day with spend (days without any are left out), each series, the day's total. */
function numbers(spend: CurrencySpend): SafeHtml {
  const { currency } = spend;
  const rows = spend.days
    .map((day, i) => ({ day, i }))
    .filter(({ i }) => (spend.dayTotals[i] ?? 0) > 0)
    .reverse();
  const cells = (values: readonly number[]) =>
    spend.series.map((s, k) => html`<td class="num" data-label="${s.name}">${units(values[k] ?? 0, currency)}</td>`);
  return html`<details class="numbers">
<summary>The numbers as a table</summary>
<div class="table-wrap stack" role="region" aria-label="Spend per day in ${currency}" tabindex="0">
<table>
<caption class="visually-hidden">Spend per day in ${currency} by agent, newest day first; days without spend are left out</caption>
<thead><tr><th scope="col">Day</th>${spend.series.map((s) => html`<th scope="col" class="num">${s.name}</th>`)}<th scope="col" class="num">Total</th></tr></thead>
<tbody>
${rows.map(
  ({ day, i }) =>
    html`<tr><td data-label="Day">${shortDay(day)}</td>${cells(spend.series.map((s) => s.perDay[i] ?? 0))}<td class="num" data-label="Total">${units(spend.dayTotals[i] ?? 0, currency)}</td></tr>`,
)}
<tr class="total"><td data-label="Day">${CHART_DAYS} days</td>${cells(spend.series.map((s) => s.total))}<td class="num" data-label="Total">${units(spend.total, currency)}</td></tr>
</tbody>
</table>
</div>
</details>`;
}
