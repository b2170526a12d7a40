/**
 * The console session on pages outside the console (DESIGN §21: the consent page uses it): the
 * session of a request's cookie, whether a form post carries its CSRF token and the console's
 * Origin, and where to sign in and come back.
 */
import type { ApiRequest } from '../contracts/api';
import { csrfTokenMatches, resolveSession, type Session } from '../use-cases/console-sessions';
import { consoleBase, parseCookies, publicPath, sessionCookieName } from './http';

export async function consoleSessionOf(req: ApiRequest): Promise<Session | undefined> {
  return resolveSession(parseCookies(undefined, req.headers.cookie).get(sessionCookieName()), new Date());
}

/** A state-changing form of a signed-in payer: the session's token, from the console's own origin. */
export const signedInFormValid = (req: ApiRequest, session: Session, csrf: string | undefined): boolean =>
  req.headers.origin === consoleBase().origin && csrfTokenMatches(session, csrf);

/** The console's sign-in page (under the public base URL's path), then back to `path`. */
export const consoleLoginUrl = (path: string): string => publicPath(`/console/login?next=${encodeURIComponent(path)}`);
