/**
 * The rules these pages' markup needs beyond the framework's base stylesheet (the CSP allows no
 * inline style: the framework serves this text as part of its one stylesheet). Mobile first: at
 * 375 px nothing is wider than the screen — a table's rows become cards (a cell a line, after its
 * column's name from `data-label`; the header row is kept for screen readers only), long ids and
 * URLs wrap, and forms stack. From 48rem the tables are tables again.
 */
export const PAGES_CSS = `
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
`;
