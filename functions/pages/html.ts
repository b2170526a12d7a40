/**
 * Server-rendered HTML pages (the approval page, docs/approvals.md): an escaping template tag, one
 * document shell with the service's only stylesheet inline, and the security headers every page
 * answer carries. The page loads nothing else, so the Content-Security-Policy allows nothing but
 * that one stylesheet (by its hash, computed here at module load from the very text sent) and form
 * posts to the page's own origin.
 */
import { createHash } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { ApiResult } from '../contracts/api';
import { toResponse } from '../http/response';

/** Markup that is already safe to send: built by `html`, never from unescaped input. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or a quoted attribute value: the five characters that can end either, escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/**
 * A template tag that escapes every interpolated value unless it is SafeHtml (a nested `html`);
 * arrays are joined, and null, undefined and false render nothing (`${cond && html`…`}`).
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += fragment(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

function fragment(value: unknown): string {
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(fragment).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
}

/** The one stylesheet, inline (an external one would be one more thing the CSP must allow). */
export const PAGE_STYLE = `
:root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
body { margin: 0; padding: 2rem 1rem; }
main { max-width: 32rem; margin: 0 auto; }
h1 { font-size: 1.5rem; margin: 0 0 1rem; }
dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.5rem 1rem; margin: 0 0 1.5rem; }
/* Colours set, not left to the browser's scheme defaults, so text and links keep 4.5:1 in both schemes. */
html { background: #fff; color: #1b1f24; }
a { color: #0b5cad; }
@media (prefers-color-scheme: dark) { html { background: #0d1117; color: #e6edf3; } a { color: #58a6ff; } }
dt { font-weight: 600; }
dd { margin: 0; overflow-wrap: anywhere; }
.amount { font-size: 1.25rem; font-weight: 600; }
.state { font-size: 1.125rem; }
form { display: flex; flex-wrap: wrap; gap: 1rem; }
.field { flex: 1 1 100%; margin: 0; }
label { display: block; margin-bottom: 0.25rem; }
input { box-sizing: border-box; width: 100%; font: inherit; padding: 0.75rem; border-radius: 0.5rem; border: 1px solid; }
button { flex: 1; font: inherit; font-weight: 600; padding: 0.75rem; border-radius: 0.5rem; border: 1px solid; cursor: pointer; }
button[value="approve"], button[value="allow"] { background: #1a7f37; color: #fff; border-color: #1a7f37; }
button[value="decline"], button[value="deny"] { background: transparent; color: inherit; }
`;

/** `'sha256-…'` of the stylesheet exactly as sent: what lets the CSP allow it and nothing else. */
export const PAGE_STYLE_HASH = `'sha256-${createHash('sha256').update(PAGE_STYLE, 'utf8').digest('base64')}'`;

/**
 * Every page answer's headers. The page's URL is a capability, so nothing may carry it elsewhere:
 * no Referer to any link followed from it, no copy in a shared or browser cache; and no other site
 * may frame the page to trick a click on Approve.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': [
    "default-src 'none'",
    `style-src ${PAGE_STYLE_HASH}`,
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; '),
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

/** A whole page: the document shell around `body`, with the page headers. */
export function htmlPage(statusCode: number, title: string, body: SafeHtml): ApiResult {
  const document = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${title}</title>
<style>${new SafeHtml(PAGE_STYLE)}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
  return { statusCode, rawBody: document.text, headers: { ...PAGE_HEADERS } };
}

/** A redirect that keeps the page headers (no caching of where it points, no Referer). */
export function seeOther(location: string): ApiResult {
  return { statusCode: 303, rawBody: '', headers: { ...PAGE_HEADERS, location } };
}

/** An error answer as a page (httpHandler's `errors` for HTML routes); the message is public. */
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
