/**
 * The console's HTTP rules (DESIGN §21): the headers every console answer carries, the session
 * cookie (`__Host-console` over https, `console` over plain http; HttpOnly, SameSite=Lax, Path=/,
 * Secure over https), and where the console is (the public base URL: its origin is the only one a
 * state-changing request may come from, its host the passkeys' relying party id).
 */
import { config } from '../config';
import { publicBaseUrl } from '../http/request';

/**
 * `Referrer-Policy: same-origin`, not no-referrer: with no-referrer Chromium sends `Origin: null` on
 * the console's own form posts, and the Origin check could not tell them from a foreign one.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function consoleHeaders(contentType = 'text/html; charset=utf-8'): Record<string, string> {
  return {
    'content-type': contentType,
    'cache-control': 'no-store',
    'content-security-policy': CONSOLE_CSP,
    'referrer-policy': 'same-origin',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    ...(secure() ? { 'strict-transport-security': 'max-age=31536000' } : {}),
  };
}

/** Static assets: named by their content's hash, so a year's immutable caching is safe. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The public base URL as a URL (PUBLIC_BASE_URL). */
export const consoleBase = (): URL => new URL(publicBaseUrl());
export const secure = (): boolean => consoleBase().protocol === 'https:';
/**
 * The passkeys' relying party: CONSOLE_RP_ID, else the base URL's host name (`localhost` locally; an
 * IP address cannot be one). A passkey works only under the id it was made for: docs/console.md,
 * "Moving the console".
 */
export const relyingParty = () => {
  const base = consoleBase();
  return { id: config().CONSOLE_RP_ID ?? base.hostname, origin: base.origin, name: config().SERVICE_NAME };
};

/**
 * The public base URL's path: `/pay` for `https://api.example.com/pay`, '' at the root. The console
 * is served under it, though its function sees paths without it (an API mapping or the CDN strips
 * it: docs/deploy.md, "Addresses").
 */
export const basePath = (): string => consoleBase().pathname.replace(/\/+$/, '');

/** A root-relative path (`/console/activity`) as the browser asks for it: under the base path. Anything else as it is. */
export const publicPath = (path: string): string => (path.startsWith('/') && !path.startsWith('//') ? `${basePath()}${path}` : path);

/**
 * Markup with every root-relative link, form action and script or image source under the base
 * path. Only markup can hold `href="/`: every value written into a page is escaped (a `"` in one is
 * `&quot;`), so no text a payer or an agent wrote is rewritten.
 */
export function underBasePath(markup: string): string {
  const base = basePath();
  return base === '' ? markup : markup.replace(/\b(href|action|src|formaction)="\/(?!\/)/g, `$1="${base}/`);
}

export const sessionCookieName = (): string => (secure() ? '__Host-console' : 'console');

export function sessionCookie(value: string): string {
  return `${sessionCookieName()}=${value}; Path=/; HttpOnly; SameSite=Lax${secure() ? '; Secure' : ''}`;
}

/** Clears the cookie in the browser (the session itself is ended on the server first). */
export function clearedSessionCookie(): string {
  return `${sessionCookieName()}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure() ? '; Secure' : ''}`;
}

/** Cookies of a request: API Gateway (payload 2.0) gives them as `cookies`; a plain Cookie header otherwise. */
export function parseCookies(cookies: readonly string[] | undefined, header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  const pairs = [...(cookies ?? []), ...(header ? header.split(';') : [])];
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const name = pair.slice(0, at).trim();
    // The first of a name wins, as browsers send the most specific first.
    if (!out.has(name)) out.set(name, pair.slice(at + 1).trim());
  }
  return out;
}

/** A local path to go back to after sign-in: the console or a consent page, nothing else (no open redirect). */
export function safeNext(next: string | undefined): string | undefined {
  if (!next || next.length > 512) return undefined;
  if (!/^\/(console(\/|\?|$)|consent\/)/.test(next)) return undefined;
  if (next.includes('\\') || next.startsWith('//')) return undefined;
  return next;
}
