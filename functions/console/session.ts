/**
 * The console's session and where the console is (DESIGN §21): the session cookie
 * (`__Host-console` over https, `console` over plain http; HttpOnly, SameSite=Lax, Path=/, Secure
 * over https), the passkeys' relying party, where sign-in may send a payer back to, and the
 * session on pages outside the console (the consent page's: its form's CSRF token and Origin).
 * The console's origin (the public base URL's) is the only one a state-changing request may come from.
 */
import { config } from '../config';
import type { ApiRequest } from '../contracts/api';
import { cookiesOf, publicBaseUrl, publicPath } from '../http/request';
import { csrfTokenMatches, resolveSession, type Session } from '../use-cases/identity/console-sessions';

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

export const sessionCookieName = (): string => (secure() ? '__Host-console' : 'console');

export function sessionCookie(value: string): string {
  return `${sessionCookieName()}=${value}; Path=/; HttpOnly; SameSite=Lax${secure() ? '; Secure' : ''}`;
}

/** Clears the cookie in the browser (the session itself is ended on the server first). */
export function clearedSessionCookie(): string {
  return `${sessionCookieName()}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure() ? '; Secure' : ''}`;
}

/** A local path to go back to after sign-in: the console or a consent page, nothing else (no open redirect). */
export function safeNext(next: string | undefined): string | undefined {
  if (!next || next.length > 512) return undefined;
  if (!/^\/(console(\/|\?|$)|consent\/)/.test(next)) return undefined;
  if (next.includes('\\') || next.startsWith('//')) return undefined;
  return next;
}

/** The state-changing request came from the console's own pages: its Origin is the console's. */
export const sameOrigin = (req: Pick<ApiRequest, 'headers'>): boolean => req.headers.origin === consoleBase().origin;

export async function consoleSessionOf(req: ApiRequest): Promise<Session | undefined> {
  return resolveSession(cookiesOf(req).get(sessionCookieName()), new Date());
}

/** A state-changing form of a signed-in payer: the session's token, from the console's own origin. */
export const signedInFormValid = (req: ApiRequest, session: Session, csrf: string | undefined): boolean =>
  sameOrigin(req) && csrfTokenMatches(session, csrf);

/** The console's sign-in page (under the public base URL's path), then back to `path`. */
export const consoleLoginUrl = (path: string): string => publicPath(`/console/login?next=${encodeURIComponent(path)}`);
