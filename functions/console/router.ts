/**
 * The console's router (DESIGN §21): every `/console` request comes here. In order: only GET and
 * POST; a GET on another host goes to the public base URL's (where the cookie and the passkeys
 * live); static assets; the signed-out routes (sign-in, sign-up, their passkey ceremonies: a POST
 * must come from the console's origin); then the session — none, and a GET goes to
 * `/console/login?next=…`; a POST must carry the console's `Origin` and the session's CSRF token
 * (else 403, before anything runs); then the framework's own signed-in routes and the pages
 * (functions/console/own, functions/console/pages), each rendered inside the layout. The request,
 * the bodies, the error mapping and the answer are the one HTTP layer's (functions/http/): what is
 * here is the console's own — its route table, sessions, CSRF and redirects.
 */
import { config } from '../config';
import type { ApiRequest } from '../contracts/api';
import { basePath, cookiesOf } from '../http/request';
import { IMMUTABLE, type WebAnswer } from '../http/response';
import {
  confirmSession,
  csrfTokenMatches,
  resolveSession,
  type Session,
  sessionAccountKeyHash,
} from '../use-cases/identity/console-sessions';
import { answer, errorAnswer, isJson, readForm, readJson, redirect, refusedJson, refusedPage } from './answers';
import { validTimeZone } from './format';
import { CONSOLE_ASSETS, consoleDocument } from './layout';
import { APPROVAL_ROUTES } from './own/approvals.page';
import { overviewPage } from './own/overview.page';
import { SECURITY_ROUTES } from './own/security.page';
import type { ConsoleRequest, ConsoleResult, ConsoleRoute, ConsoleSession } from './page';
import { PAGE_ROUTES } from './pages';
import { clearedSessionCookie, consoleBase, sameOrigin, sessionCookieName } from './session';
import { type ConsoleHttpRequest, signedInRoute, signedOutRoute } from './session-routes';

/** The console's own signed-in pages; the pages engineer's (PAGE_ROUTES) beside them. */
const OWN_ROUTES: readonly ConsoleRoute[] = [
  { method: 'GET', path: '/console', page: overviewPage },
  ...APPROVAL_ROUTES,
  ...SECURITY_ROUTES,
];

interface CompiledRoute {
  route: ConsoleRoute;
  pattern: RegExp;
  names: string[];
}

const compile = (route: ConsoleRoute): CompiledRoute => {
  const names: string[] = [];
  const source = route.path
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(segment.slice(1));
      return '([^/]+)';
    })
    .join('/');
  return { route, pattern: new RegExp(`^${source}$`), names };
};

const ROUTES: readonly CompiledRoute[] = [...OWN_ROUTES, ...PAGE_ROUTES].map(compile);

/** The query as a string: what a redirect keeps of where the payer was going. */
const searchOf = (req: ConsoleHttpRequest): string => {
  const search = new URLSearchParams(Object.entries(req.query).filter((e): e is [string, string] => e[1] !== undefined)).toString();
  return search ? `?${search}` : '';
};

/** Every console request the HTTP layer hands over, answered. Errors become pages (or JSON for the script). */
export async function serveConsole(request: ApiRequest): Promise<WebAnswer> {
  const req: ConsoleHttpRequest = { ...request, cookies: cookiesOf(request), address: request.sourceIp ?? 'unknown', now: new Date() };
  let session: Session | undefined;
  try {
    const before = await beforeSession(req);
    if (before) return before;
    session = await resolveSession(req.cookies.get(sessionCookieName()), req.now);
    if (!session) {
      if (req.method === 'GET') return redirect(`/console/login?next=${encodeURIComponent(`${req.path}${searchOf(req)}`)}`);
      if (isJson(req)) return refusedJson('consoleSessionEnded');
      return redirect('/console/login');
    }
    let form: Record<string, string> = {};
    let body: Record<string, unknown> = {};
    if (req.method === 'POST') {
      if (isJson(req)) body = readJson(req);
      else form = readForm(req);
      const refused = await refusedPost(req, session, isJson(req) ? (typeof body.csrf === 'string' ? body.csrf : undefined) : form.csrf);
      if (refused) return refused;
      delete form.csrf;
    }
    const own = await signedInRoute(req, session, body);
    if (own) return own;
    return await page(req, session, form);
  } catch (error) {
    return errorAnswer(req, error, session);
  }
}

/** What is answered before any session is read: other methods, another host, the assets, the signed-out routes. */
async function beforeSession(req: ConsoleHttpRequest): Promise<WebAnswer | undefined> {
  if (req.method !== 'GET' && req.method !== 'POST') return refusedPage('consoleMethodNotAllowed');
  // A GET on another host goes to the public address, where the cookie and the passkeys live, only
  // where requests for that address arrive with its own host (CONSOLE_HOST_REDIRECT: the stack's
  // custom domain). Behind a CDN they arrive with the origin's host, as a direct request does, and
  // the redirect would send every request back to itself (issue 38).
  const base = consoleBase();
  if (req.method === 'GET' && config().CONSOLE_HOST_REDIRECT && req.headers.host !== undefined && req.headers.host !== base.host) {
    return redirect(`${base.origin}${basePath()}${req.path}${searchOf(req)}`);
  }
  if (req.method === 'GET' && req.path.startsWith('/console/assets/')) {
    const asset = CONSOLE_ASSETS.get(req.path);
    if (!asset) return refusedPage('consoleNoSuchFile');
    return answer(200, asset.body, { headers: { 'content-type': asset.contentType, 'cache-control': IMMUTABLE } });
  }
  return signedOutRoute(req);
}

/**
 * A signed-in POST that may not act: without the console's Origin or the session's CSRF token
 * (403), or on a session whose opener no longer stands (DESIGN §24: a rotation or a removal ends
 * its sessions eagerly, and this closes the race with one). Undefined when it may.
 */
async function refusedPost(req: ConsoleHttpRequest, session: Session, token: string | undefined): Promise<WebAnswer | undefined> {
  if (!sameOrigin(req) || !csrfTokenMatches(session, token)) {
    return isJson(req) ? refusedJson('consoleForbidden') : refusedPage('consoleFormForbidden', session);
  }
  if (await confirmSession(session)) return undefined;
  const cleared = [clearedSessionCookie()];
  return isJson(req) ? refusedJson('consoleSessionEnded', cleared) : redirect('/console/login', cleared);
}

/** A page of OWN_ROUTES or PAGE_ROUTES, its answer rendered. */
async function page(req: ConsoleHttpRequest, session: Session, form: Record<string, string>): Promise<WebAnswer> {
  for (const { route, pattern, names } of ROUTES) {
    if (route.method !== req.method) continue;
    const match = pattern.exec(req.path);
    if (!match) continue;
    const params: Record<string, string> = {};
    names.forEach((name, i) => {
      params[name] = decodeURIComponent(match[i + 1] ?? '');
    });
    const timeZone = validTimeZone(decodeCookie(req.cookies.get('console-tz')));
    const accountKeyHash = sessionAccountKeyHash(session);
    const consoleSession: ConsoleSession = {
      userId: session.userId,
      csrfToken: session.csrfToken,
      openedBy: session.openedBy.kind,
      ...(accountKeyHash ? { accountKeyHash } : {}),
      ...(timeZone ? { timeZone } : {}),
    };
    const request: ConsoleRequest = {
      method: req.method as 'GET' | 'POST',
      path: req.path,
      params,
      query: Object.fromEntries(Object.entries(req.query).filter((e): e is [string, string] => e[1] !== undefined)),
      form,
      baseUrl: consoleBase().origin + consoleBase().pathname.replace(/\/+$/, ''),
      now: req.now,
      sessionHash: session.hash,
      currentSession: session,
      ...(req.headers['user-agent'] ? { userAgent: req.headers['user-agent'] } : {}),
    };
    return render(await route.page(consoleSession, request), session);
  }
  return refusedPage('consoleNoSuchPage', session);
}

function decodeCookie(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

function render(result: ConsoleResult, session: Session): WebAnswer {
  switch (result.kind) {
    case 'page':
      return answer(
        result.status ?? 200,
        consoleDocument({
          title: result.title,
          body: result.body,
          signedIn: { csrfToken: session.csrfToken, nav: result.nav },
          script: result.nav === 'security',
        }),
      );
    case 'redirect':
      // A page's redirect stays on the console's own origin.
      if (!result.location.startsWith('/') || result.location.startsWith('//'))
        throw new Error(`redirect off the console: ${result.location}`);
      return redirect(result.location, result.signedOut ? [clearedSessionCookie()] : undefined);
    case 'download':
      return answer(200, result.body, {
        headers: {
          'content-type': result.contentType,
          'content-disposition': `attachment; filename="${result.filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
        },
      });
  }
}
