/**
 * The one page shell (head, skip link, header, main, footer) of every page the service renders —
 * the console's and the pages a payer reaches by a link (approval, consent, home) — and the
 * security headers each kind of page answer carries. A link page loads nothing: its CSP allows
 * only the stylesheet it sends inline (by its hash) and form posts to its own origin. The console
 * loads its stylesheet and its one script from its own origin.
 */
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { config } from '../config';
import type { ApiResult } from '../contracts/api';
import { html, SafeHtml } from './html';
import { publicBaseUrl } from './request';
import { toResponse } from './response';
import { STYLESHEET, STYLESHEET_HASH } from './style';

export interface ShellParts {
  /** The document's `<title>`. */
  title: string;
  /** `<style>` or `<link>` (and a `<script>`), inside `<head>`. */
  head: SafeHtml;
  /** The header's first row: the service's name (a link in the console), and the console's Sign out. */
  top: SafeHtml;
  /** The console's navigation, under the first row. */
  nav?: SafeHtml;
  /** `main`'s class: `narrow` (one column) or `link` (a link page). */
  mainClass?: string;
  /** `body`'s class: `link` for a link page (its header and footer as narrow as its one column). */
  bodyClass?: string;
  body: SafeHtml;
}

/** A whole document in the shell. */
export function pageShell(parts: ShellParts): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${parts.title}</title>
${parts.head}
</head>
<body${parts.bodyClass ? new SafeHtml(` class="${parts.bodyClass}"`) : ''}>
<a class="skip" href="#content">Skip to content</a>
<header class="top">
<div class="top-row">
${parts.top}
</div>
${parts.nav}
</header>
<main id="content"${parts.mainClass ? new SafeHtml(` class="${parts.mainClass}"`) : ''}>
${parts.body}
</main>
<footer class="foot"><p>${config().SERVICE_NAME}</p></footer>
</body>
</html>
`.text;
}

/**
 * Every link page answer's headers. The page's URL is a capability, so nothing may carry it
 * elsewhere: no Referer to any link followed from it, no copy in a shared or browser cache; and no
 * other site may frame the page to trick a click on Approve.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': [
    "default-src 'none'",
    `style-src ${STYLESHEET_HASH}`,
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; '),
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

/** A link page: the shell around `body` (which holds its own `<h1>`), the stylesheet inline, with the page headers. */
export function htmlPage(statusCode: number, title: string, body: SafeHtml): ApiResult {
  const document = pageShell({
    title,
    head: html`<style>${new SafeHtml(STYLESHEET)}</style>`,
    top: html`<span class="brand">${config().SERVICE_NAME}</span>`,
    mainClass: 'link',
    bodyClass: 'link',
    body,
  });
  return { statusCode, rawBody: document, headers: { ...PAGE_HEADERS } };
}

/** A redirect that keeps the page headers (no caching of where it points, no Referer). */
export function seeOther(location: string): ApiResult {
  return { statusCode: 303, rawBody: '', headers: { ...PAGE_HEADERS, location } };
}

/** An error answer as a link page (httpHandler's `errors` for HTML routes); the message is public. */
export function htmlErrorResponse(
  statusCode: number,
  message: string,
  headers: Record<string, string> = {},
): APIGatewayProxyStructuredResultV2 {
  const title = statusCode >= 500 ? 'Something went wrong' : 'This request cannot be handled';
  const page = htmlPage(
    statusCode,
    title,
    html`<h1>${title}</h1>
<p class="state">${message}${statusCode >= 500 ? '. Please try again in a moment.' : ''}</p>`,
  );
  return toResponse({ ...page, headers: { ...page.headers, ...headers } });
}

/**
 * The console's CSP: its stylesheet and its one script from its own origin, `connect-src 'self'`
 * for the passkey script's fetch. `Referrer-Policy: same-origin`, not no-referrer: with
 * no-referrer Chromium sends `Origin: null` on the console's own form posts, and the Origin check
 * could not tell them from a foreign one.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Every console answer's headers (HSTS when the console is served over https). */
export function consoleHeaders(contentType = 'text/html; charset=utf-8'): Record<string, string> {
  return {
    'content-type': contentType,
    'cache-control': 'no-store',
    'content-security-policy': CONSOLE_CSP,
    'referrer-policy': 'same-origin',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    ...(new URL(publicBaseUrl()).protocol === 'https:' ? { 'strict-transport-security': 'max-age=31536000' } : {}),
  };
}
