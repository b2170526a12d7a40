/**
 * The one stylesheet of every page the service renders: the console (served from its own origin
 * under a name with its content hash, `style-src 'self'`) and the pages a payer reaches by a link —
 * the approval, consent and home pages (sent inline, allowed by its hash: they load nothing else).
 * Mobile first: one column at 375 px, the navigation wraps, tables scroll inside their own box or
 * become cards, never the page.
 */
import { createHash } from 'node:crypto';

/** The shell's rules: header, navigation, main, forms, buttons. --field: a form field's border, 3:1 or more against the page in both schemes (WCAG 1.4.11), so an empty field is seen. */
const BASE_CSS = `
:root { color-scheme: light dark; --fg: #1b1f24; --muted: #57606a; --bg: #fff; --line: #d0d7de; --accent: #0b5cad; --ok: #1a7f37; --warn: #9a6700; --bad: #cf222e; --panel: #f6f8fa; --field: #6e7781; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9da7b3; --bg: #0d1117; --line: #30363d; --accent: #58a6ff; --ok: #3fb950; --warn: #d29922; --bad: #f85149; --panel: #161b22; --field: #768390; } }
* { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; line-height: 1.5; color: var(--fg); background: var(--bg); }
body { margin: 0; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: 0.5rem; z-index: 1; }
header.top { border-bottom: 1px solid var(--line); padding: 0.75rem 0; }
.top-row { padding: 0 1rem; display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 0.5rem; max-width: 64rem; margin: 0 auto; }
.brand { font-weight: 700; color: var(--fg); text-decoration: none; }
nav.main { max-width: 64rem; margin: 0.5rem auto 0; padding: 0 0.5rem; }
nav.main ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: 0.25rem 0.5rem; }
nav.main a { display: inline-block; padding: 0.375rem 0.5rem; border-radius: 0.375rem; text-decoration: none; }
nav.main a[aria-current="page"] { background: var(--panel); color: var(--fg); font-weight: 600; }
main { max-width: 64rem; margin: 0 auto; padding: 1rem; }
main.narrow { max-width: 30rem; }
h1 { font-size: 1.5rem; margin: 0.5rem 0 1rem; }
h2 { font-size: 1.125rem; margin: 1.5rem 0 0.5rem; }
p { margin: 0 0 1rem; }
.muted { color: var(--muted); }
.notice { border-left: 4px solid var(--ok); background: var(--panel); padding: 0.75rem 1rem; margin: 0 0 1rem; }
.error { border-left: 4px solid var(--bad); background: var(--panel); padding: 0.75rem 1rem; margin: 0 0 1rem; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); gap: 1rem; margin: 0 0 1rem; }
.card { border: 1px solid var(--line); border-radius: 0.5rem; padding: 1rem; min-width: 0; }
.card h2, .card h3 { margin-top: 0; font-size: 1rem; }
ul.items h2 { margin-top: 0; }
.big { font-size: 1.5rem; font-weight: 700; overflow-wrap: anywhere; }
dl.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.25rem 1rem; margin: 0 0 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.table-wrap { overflow-x: auto; max-width: 100%; margin: 0 0 1rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 0.5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td.num, th.num { text-align: right; white-space: nowrap; }
ul.items { list-style: none; margin: 0 0 1rem; padding: 0; }
ul.items > li { border: 1px solid var(--line); border-radius: 0.5rem; padding: 1rem; margin: 0 0 0.75rem; overflow-wrap: anywhere; }
form { margin: 0 0 1rem; }
form.inline { display: inline; margin: 0; }
.field { margin: 0 0 1rem; }
label { display: block; font-weight: 600; margin: 0 0 0.25rem; }
input, select { width: 100%; max-width: 28rem; font: inherit; padding: 0.625rem; border: 1px solid var(--field); border-radius: 0.375rem; background: var(--bg); color: var(--fg); }
button, .button { display: inline-block; font: inherit; font-weight: 600; padding: 0.625rem 1rem; border-radius: 0.375rem; border: 1px solid var(--line); background: var(--panel); color: var(--fg); cursor: pointer; text-decoration: none; }
button.primary, .button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
@media (prefers-color-scheme: dark) { button.primary, .button.primary { color: #0d1117; } }
button.danger { color: var(--bad); }
.actions { display: flex; flex-wrap: wrap; gap: 0.5rem; margin: 0.5rem 0 0; }
.or { margin: 1.5rem 0; color: var(--muted); }
.key { font-family: ui-monospace, monospace; font-size: 1rem; padding: 0.75rem; border: 1px solid var(--line); border-radius: 0.375rem; background: var(--panel); overflow-wrap: anywhere; user-select: all; }
`;

/**
 * What the console's money and settings pages' markup needs beyond the shell's rules (the CSP allows no
 * inline style: the framework serves this text as part of its one stylesheet). Mobile first: at
 * 375 px nothing is wider than the screen — a table's rows become cards (a cell a line, after its
 * column's name from `data-label`; the header row is kept for screen readers only), long ids and
 * URLs wrap, and forms stack. From 48rem the tables are tables again.
 */
const PAGES_CSS = `
.visually-hidden { /* positioned ancestors (.table-wrap, .card) keep it from widening the page */  position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.hint { font-size: 0.875rem; margin: 0.25rem 0 0; color: var(--muted); }
.mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.875rem; overflow-wrap: anywhere; }
.wrap { overflow-wrap: anywhere; }
.empty { padding: 1rem; border: 1px dashed; border-radius: 0.5rem; }
.notice { padding: 0.75rem 1rem; border-radius: 0.5rem; border: 1px solid #1a7f37; }
.error { padding: 0.75rem 1rem; border-radius: 0.5rem; border: 2px solid #cf222e; flex: 1 1 100%; }
.error p { margin: 0; }
.table-wrap { position: relative; max-width: 100%; overflow-x: auto; margin: 0 0 1rem; }
.table-wrap:focus-visible { outline: 2px solid; outline-offset: 2px; }
.table-wrap table { border-collapse: collapse; min-width: 100%; }
.table-wrap th, .table-wrap td { text-align: left; padding: 0.5rem; border-bottom: 1px solid rgba(127, 127, 127, 0.4); vertical-align: top; }
.table-wrap td.num, .table-wrap th.num { white-space: nowrap; text-align: right; }
.table-wrap td.wrap { min-width: 10rem; }
.cards { list-style: none; padding: 0; margin: 0 0 1rem; display: grid; gap: 1rem; }
.card { position: relative; border: 1px solid rgba(127, 127, 127, 0.5); border-radius: 0.5rem; padding: 1rem; min-width: 0; }
.card h3 { margin: 0 0 0.5rem; font-size: 1.125rem; overflow-wrap: anywhere; }
.card dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.25rem 1rem; margin: 0 0 1rem; }
.card dd { margin: 0; overflow-wrap: anywhere; }
.card.row { display: flex; flex-wrap: wrap; gap: 1rem; justify-content: space-between; align-items: center; }
.card.row p { margin: 0.25rem 0; }
.status { font-weight: 600; }
.status-success, .status-active, .status-completed { color: #1a7f37; }
.status-failed, .status-revoked { color: #cf222e; }
.status-pending { color: #9a6700; }
.status-expired { color: var(--muted); }
@media (prefers-color-scheme: dark) {
  .status-success, .status-active, .status-completed { color: #3fb950; }
  .status-failed, .status-revoked { color: #ff7b72; }
  .status-pending { color: #d29922; }
}
fieldset { border: 1px solid rgba(127, 127, 127, 0.5); border-radius: 0.5rem; padding: 0.75rem 1rem; margin: 0 0 1rem; min-width: 0; flex: 1 1 100%; }
legend { font-weight: 600; padding: 0 0.25rem; }
select { box-sizing: border-box; width: 100%; font: inherit; padding: 0.75rem; border-radius: 0.5rem; border: 1px solid var(--field, currentColor); }
.with-unit { display: flex; align-items: center; gap: 0.5rem; }
.with-unit input { flex: 1 1 auto; min-width: 0; width: auto; }
.with-unit .unit { font-weight: 600; flex: none; }
.filters { display: grid; grid-template-columns: 1fr; gap: 0.75rem; margin: 0 0 1rem; }
/* The grid's gap spaces the fields: a field's own bottom margin would lift the selects above the button's line. */
.filters .field { margin: 0; }
/* One height for the fields and the button (a select's and a button's line boxes differ), so they share a line. */
.filters select, .filters button { height: 3rem; padding-top: 0; padding-bottom: 0; }
@media (min-width: 48rem) { .filters { grid-template-columns: repeat(3, minmax(0, 1fr)) auto; align-items: end; } }
@media (max-width: 47.99rem) {
  .table-wrap.stack { overflow-x: visible; }
  .stack table, .stack tbody, .stack tr, .stack td { display: block; width: auto; min-width: 0; }
  .stack thead { position: absolute; width: 1px; height: 1px; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  .stack tr { border: 1px solid rgba(127, 127, 127, 0.5); border-radius: 0.5rem; padding: 0.25rem 0.75rem; margin: 0 0 0.75rem; }
  .stack td, .table-wrap.stack td.wrap { position: relative; min-width: 0; min-height: 1.5em; padding: 0.375rem 0 0.375rem 7.5rem; overflow-wrap: anywhere; }
  .stack td:last-child { border-bottom: 0; }
  .stack td::before { content: attr(data-label); position: absolute; left: 0; width: 7rem; font: 600 1rem/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; text-align: left; white-space: normal; }
  /* Amounts keep their line, right-aligned under one another from card to card. */
  .table-wrap.stack td.num { text-align: right; white-space: nowrap; }
  .stack td.action { padding-left: 0; min-height: 0; }
  .stack td.action::before { content: none; }
}
main > p.hint, section > p.hint { margin-bottom: 1rem; }
.pager, .actions { display: flex; flex-wrap: wrap; gap: 1rem; margin: 1rem 0; }
a.button { display: inline-block; font-weight: 600; padding: 0.75rem 1rem; border-radius: 0.5rem; border: 1px solid; text-decoration: none; }
button.danger { border-color: #cf222e; }
img.qr { display: block; max-width: 100%; height: auto; background: #fff; padding: 0.5rem; border-radius: 0.5rem; margin: 0 0 1rem; }
.secret textarea { box-sizing: border-box; width: 100%; font: inherit; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; padding: 0.75rem; border-radius: 0.5rem; border: 1px solid; word-break: break-all; resize: none; }
section { margin: 0 0 2rem; }
/* A destructive action's link to its confirmation (Revoke, Remove, Rotate account key) looks like its button. */
a.button.danger { color: var(--bad); border-color: #cf222e; }
/* Security's sessions: one card each, as its passkeys. */
ul.sessions { list-style: none; margin: 0 0 1rem; padding: 0; }
ul.sessions > li { border: 1px solid var(--line); border-radius: 0.5rem; padding: 1rem; margin: 0 0 0.75rem; overflow-wrap: anywhere; }
ul.sessions form { margin: 0; }
/* The Statement's filters: three a row from 48rem, the note and the button under them; a credit's amount in green beside its plus sign. */
.statement-filters input { box-sizing: border-box; height: 3rem; max-width: none; }
.statement-filters .hint { grid-column: 1 / -1; margin: 0; }
.statement-filters button { justify-self: start; }
@media (min-width: 48rem) { .filters.statement-filters { grid-template-columns: repeat(3, minmax(0, 1fr)); } }
span.credit { color: var(--ok); }
/* As a table: a date and a type on one line each (a date split in two doubled every row’s height); the description takes the room. */
@media (min-width: 48rem) { table.statement td.nowrap { white-space: nowrap; } }
/* Its cards on a phone: a label column wide enough for its longest labels (Counterparty, Balance after) on one line. */
@media (max-width: 47.99rem) {
  .table-wrap.stack table.statement td { padding-left: 8.75rem; }
  .stack table.statement td::before { width: 8.25rem; }
}
`;

/**
 * The pages a payer reaches by a link (`<main class="link">`: approval, consent, home): one
 * narrow column, the facts as a list of terms, the decision's buttons side by side and filling
 * the line, the one that gives (Approve, Allow) in green.
 */
const LINK_PAGES_CSS = `
main.link { max-width: 32rem; padding-top: 1.5rem; }
main.link h1 { margin: 0 0 1rem; }
main.link dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.5rem 1rem; margin: 0 0 1.5rem; }
main.link dt { font-weight: 600; }
main.link dd { margin: 0; overflow-wrap: anywhere; }
main.link .amount { font-size: 1.25rem; font-weight: 600; }
main.link .state { font-size: 1.125rem; }
main.link form { display: flex; flex-wrap: wrap; gap: 1rem; }
main.link .field { flex: 1 1 100%; margin: 0; }
main.link input { max-width: none; }
main.link form button { flex: 1; border-color: var(--field); }
main.link button[value="approve"], main.link button[value="allow"] { background: #1a7f37; color: #fff; border-color: #1a7f37; }
main.link button[value="decline"], main.link button[value="deny"] { background: transparent; color: inherit; }
main.link ul { padding-left: 1.25rem; }
main.link li { margin: 0 0 0.5rem; }
footer.foot { max-width: 64rem; margin: 2rem auto 0; padding: 1rem; border-top: 1px solid var(--line); font-size: 0.875rem; color: var(--muted); }
footer.foot p { margin: 0; }
body.link .top-row, body.link footer.foot { max-width: 32rem; }
`;

/**
 * The Overview's spend chart (console/own/spend.view.ts): the SVG scales with its viewBox to the
 * card's width (never wider: no sideways scroll at 375 px); the cards sit side by side from 48rem.
 * Series colours are classes, not attributes, so the dark scheme can lighten them; Others is grey.
 */
const CHART_CSS = `
.charts { display: grid; grid-template-columns: minmax(0, 1fr); gap: 1rem; }
@media (min-width: 48rem) { .charts { grid-template-columns: repeat(auto-fit, minmax(24rem, 1fr)); } }
.chart { container-type: inline-size; }
.chart-body { display: grid; grid-template-columns: minmax(0, 1fr); grid-template-areas: "months" "svg" "legend" "table"; }
.chart-body > dl.months { grid-area: months; } .chart-body > .chart-svg { grid-area: svg; } .chart-body > ul.legend { grid-area: legend; } .chart-body > details { grid-area: table; }
/* A wide card (one currency at 1280 px): the chart at a size its labels read well, the months beside it. */
@container (min-width: 44rem) { .chart-body { grid-template-columns: minmax(0, 30rem) minmax(0, 1fr); grid-template-areas: "svg months" "legend months" "table table"; column-gap: 2rem; align-items: start; } }
.chart-svg { display: block; width: 100%; height: auto; max-width: 30rem; margin: 0 0 0.75rem; }
.chart-svg text { fill: var(--muted); font: 13px system-ui, -apple-system, "Segoe UI", sans-serif; }
.chart-svg .axis-unit { font-weight: 600; fill: var(--fg); }
.chart-svg line.grid { stroke: var(--line); stroke-width: 1; }
.s0 { fill: #0969da; background: #0969da; } .s1 { fill: #e16f24; background: #e16f24; } .s2 { fill: #1a7f37; background: #1a7f37; }
.s3 { fill: #8250df; background: #8250df; } .s4 { fill: #bf3989; background: #bf3989; } .so { fill: #8c959f; background: #8c959f; }
@media (prefers-color-scheme: dark) {
  .s0 { fill: #4493f8; background: #4493f8; } .s1 { fill: #f0883e; background: #f0883e; } .s2 { fill: #3fb950; background: #3fb950; }
  .s3 { fill: #a371f7; background: #a371f7; } .s4 { fill: #db61a2; background: #db61a2; } .so { fill: #6e7681; background: #6e7681; }
}
ul.legend { list-style: none; padding: 0; margin: 0 0 0.75rem; display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; font-size: 0.875rem; }
ul.legend li { display: flex; align-items: baseline; gap: 0.375rem; min-width: 0; }
.swatch { display: inline-block; width: 0.75rem; height: 0.75rem; border-radius: 0.125rem; flex: none; }
dl.months { font-size: 0.9375rem; }
@media (max-width: 29.99rem) { dl.months { display: block; } dl.months dd { margin: 0 0 0.5rem; } }
details.numbers summary { cursor: pointer; color: var(--accent); margin: 0 0 0.5rem; }
details.numbers tr.total td { font-weight: 600; }
`;

/**
 * A form's problems (console/pages/ui.ts `formField`, `problemSummary`): each beside its field, in
 * words first (an icon or colour alone says nothing to some), the field's border thicker and red.
 */
const FORM_CSS = `
.field-error { color: var(--bad); font-weight: 600; margin: 0 0 0.25rem; overflow-wrap: anywhere; }
.field.invalid input, .field.invalid select { border: 2px solid var(--bad); }
.error ul { margin: 0.5rem 0 0; padding-left: 1.25rem; }
.error li { margin: 0.25rem 0; overflow-wrap: anywhere; }
meter.spent { display: block; width: 100%; max-width: 20rem; height: 0.75rem; margin: 0.25rem 0 0.25rem; }
.copy-row { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 1rem; margin: 0.5rem 0 0; }
.copy-status { color: var(--muted); }
/* The button's own display would show it: hidden until the script shows it (console/copy.ts). */
button.copy[hidden] { display: none; }
`;

/** The whole stylesheet: the shell's rules, the console pages', the link pages', the chart's, the form problems'. */
export const STYLESHEET = BASE_CSS + PAGES_CSS + LINK_PAGES_CSS + CHART_CSS + FORM_CSS;

/** `'sha256-…'` of the stylesheet exactly as sent inline: what lets a link page's CSP allow it and nothing else. */
export const STYLESHEET_HASH = `'sha256-${createHash('sha256').update(STYLESHEET, 'utf8').digest('base64')}'`;

/** The first 16 hex digits of its SHA-256: the console serves it under a name with them, so a year's caching is safe. */
export const STYLESHEET_VERSION = createHash('sha256').update(STYLESHEET).digest('hex').slice(0, 16);
