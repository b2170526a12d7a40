/**
 * The console's one stylesheet, served from the console's own origin under a name with its content
 * hash (`style-src 'self'`; cached for a year, immutable: a change is a new name). Mobile first:
 * one column at 375 px, the navigation wraps, tables scroll inside their own box, never the page.
 */
import { createHash } from 'node:crypto';
import { PAGES_CSS } from './pages/style';

// --field: a form field's border, 3:1 or more against the page in both schemes (WCAG 1.4.11), so an empty field is seen.
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

/** The framework's rules, then what the money and settings pages (pages/) need. */
export const CONSOLE_CSS = BASE_CSS + PAGES_CSS;

/** The stylesheet's URL path: its content's hash in the name, so a year's caching is safe. */
export const CONSOLE_CSS_PATH = `/console/assets/console.${createHash('sha256').update(CONSOLE_CSS).digest('hex').slice(0, 16)}.css`;
