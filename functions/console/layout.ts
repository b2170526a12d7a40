/**
 * The console's document in the one page shell (http/page.ts), with the navigation of CONSOLE_NAV (exact
 * labels, the current page marked for screen readers) and the `Sign out` button for a signed-in
 * payer, or just the service's name for the sign-in pages. Every value goes through the escaping
 * `html` tag; the one stylesheet (http/style.ts) and the one script come from the console's own origin.
 */
import { createHash } from 'node:crypto';
import { config } from '../config';
import { html, SafeHtml } from '../http/html';
import { pageShell } from '../http/page';
import { STYLESHEET, STYLESHEET_VERSION } from '../http/style';
import { CONSOLE_SCRIPT, PASSKEY_SCRIPT } from './assets.generated';
import { CONSOLE_NAV, type ConsoleNavName } from './page';

/** The one stylesheet, as the console serves it. */
export const CONSOLE_CSS = STYLESHEET;

/** The stylesheet's URL path: its content's hash in the name, so a year's caching is safe. */
export const CONSOLE_CSS_PATH = `/console/assets/console.${STYLESHEET_VERSION}.css`;

export const PASSKEY_SCRIPT_PATH = `/console/assets/passkey.${createHash('sha256').update(PASSKEY_SCRIPT).digest('hex').slice(0, 16)}.js`;

/** The script every console page loads (Copy buttons, the time zone): browser/console.js. */
export const CONSOLE_SCRIPT_PATH = `/console/assets/console.${createHash('sha256').update(CONSOLE_SCRIPT).digest('hex').slice(0, 16)}.js`;

/** The console's static files by path: content-hashed names, served with immutable caching. */
export const CONSOLE_ASSETS: ReadonlyMap<string, { contentType: string; body: string }> = new Map([
  [CONSOLE_CSS_PATH, { contentType: 'text/css; charset=utf-8', body: CONSOLE_CSS }],
  [PASSKEY_SCRIPT_PATH, { contentType: 'text/javascript; charset=utf-8', body: PASSKEY_SCRIPT }],
  [CONSOLE_SCRIPT_PATH, { contentType: 'text/javascript; charset=utf-8', body: CONSOLE_SCRIPT }],
]);

export interface DocumentOptions {
  title: string;
  body: SafeHtml;
  /** Signed in: the navigation (this entry marked current) and Sign out with the session's token. */
  signedIn?: { csrfToken: string; nav?: ConsoleNavName };
  /** Loads the passkey script (the sign-in, sign-up and Security pages). */
  script?: boolean;
  /** A one-column page (sign-in, sign-up, welcome). */
  narrow?: boolean;
}

/** The hidden field every console form carries. */
export const csrfField = (csrfToken: string): SafeHtml => html`<input type="hidden" name="csrf" value="${csrfToken}">`;

export function consoleDocument(opts: DocumentOptions): string {
  const service = config().SERVICE_NAME;
  const signedIn = opts.signedIn;
  return pageShell({
    title: `${opts.title} · ${service}`,
    head: html`<link rel="stylesheet" href="${CONSOLE_CSS_PATH}">
<script src="${CONSOLE_SCRIPT_PATH}" defer></script>
${opts.script && html`<script src="${PASSKEY_SCRIPT_PATH}" defer></script>`}`,
    top: html`<a class="brand" href="/console">${service}</a>
${
  signedIn &&
  html`<form class="inline" method="post" action="/console/logout">${csrfField(signedIn.csrfToken)}<button type="submit">Sign out</button></form>`
}`,
    ...(signedIn
      ? {
          nav: html`<nav class="main" aria-label="Console">
<ul>
${CONSOLE_NAV.map(
  (entry) =>
    html`<li><a href="${entry.path}"${entry.name === signedIn.nav ? new SafeHtml(' aria-current="page"') : ''}>${entry.label}</a></li>`,
)}
</ul>
</nav>`,
        }
      : {}),
    ...(opts.narrow ? { mainClass: 'narrow' } : {}),
    body: html`<h1>${opts.title}</h1>
${opts.body}`,
  });
}
