/**
 * The console's document: one shell for every page, with the navigation of CONSOLE_NAV (exact
 * labels, the current page marked for screen readers) and the `Sign out` button for a signed-in
 * payer, or just the service's name for the sign-in pages. Every value goes through the escaping
 * `html` tag; the stylesheet and the one script come from the console's own origin.
 */
import { createHash } from 'node:crypto';
import { config } from '../config';
import { html, SafeHtml } from '../pages/html';
import { PASSKEY_SCRIPT } from './assets.generated';
import { CONSOLE_NAV, type ConsoleNavName } from './page';
import { CONSOLE_CSS, CONSOLE_CSS_PATH } from './style';

export const PASSKEY_SCRIPT_PATH = `/console/assets/passkey.${createHash('sha256').update(PASSKEY_SCRIPT).digest('hex').slice(0, 16)}.js`;

/** The console's static files by path: content-hashed names, served with immutable caching. */
export const CONSOLE_ASSETS: ReadonlyMap<string, { contentType: string; body: string }> = new Map([
  [CONSOLE_CSS_PATH, { contentType: 'text/css; charset=utf-8', body: CONSOLE_CSS }],
  [PASSKEY_SCRIPT_PATH, { contentType: 'text/javascript; charset=utf-8', body: PASSKEY_SCRIPT }],
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
  const header = html`<header class="top">
<div class="top-row">
<a class="brand" href="/console">${service}</a>
${
  signedIn &&
  html`<form class="inline" method="post" action="/console/logout">${csrfField(signedIn.csrfToken)}<button type="submit">Sign out</button></form>`
}
</div>
${
  signedIn &&
  html`<nav class="main" aria-label="Console">
<ul>
${CONSOLE_NAV.map(
  (entry) =>
    html`<li><a href="${entry.path}"${entry.name === signedIn.nav ? new SafeHtml(' aria-current="page"') : ''}>${entry.label}</a></li>`,
)}
</ul>
</nav>`
}
</header>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${opts.title} · ${service}</title>
<link rel="stylesheet" href="${CONSOLE_CSS_PATH}">
${opts.script && html`<script src="${PASSKEY_SCRIPT_PATH}" defer></script>`}
</head>
<body>
<a class="skip" href="#content">Skip to content</a>
${header}
<main id="content"${opts.narrow ? new SafeHtml(' class="narrow"') : ''}>
<h1>${opts.title}</h1>
${opts.body}
</main>
</body>
</html>
`.text;
}
