/**
 * The console's router (DESIGN §21): every `/console` request comes here. In order: only GET and
 * POST; a GET on another host goes to the public base URL's (where the cookie and the passkeys
 * live); static assets; the signed-out routes (sign-in, sign-up, their passkey ceremonies: a POST
 * must come from the console's origin); then the session — none, and a GET goes to
 * `/console/login?next=…`; a POST must carry the console's `Origin` and the session's CSRF token
 * (else 403, before anything runs); then the framework's own signed-in routes and the pages
 * (functions/console/own, functions/console/pages), each rendered inside the layout.
 */

import { config } from '../config';
import { renderRefusal } from '../contracts/outcome';
import { type RefusalArgs, type RefusalCode, refusalStatus, refusalText } from '../messages/catalogue';
import { isRefusal, refuse } from '../messages/refusal';
import { logger } from '../observability/logger';
import { serializeError } from '../observability/serialize-error';
import { html } from '../pages/html';
import {
  confirmSession,
  csrfTokenMatches,
  endAllSessions,
  endSession,
  resolveSession,
  type Session,
  sessionAccountKeyHash,
  signInWithAccountKey,
  takeWelcome,
} from '../use-cases/console-sessions';
import {
  addPasskeyOptions,
  addPasskeyProofOptions,
  finishAddPasskey,
  finishSignIn,
  finishSignUp,
  signInOptions,
  signUpOptions,
} from '../use-cases/passkeys';
import { validTimeZone } from './format';
import {
  basePath,
  clearedSessionCookie,
  consoleBase,
  consoleHeaders,
  IMMUTABLE,
  publicPath,
  relyingParty,
  safeNext,
  sessionCookie,
  sessionCookieName,
  underBasePath,
} from './http';
import { CONSOLE_ASSETS, consoleDocument } from './layout';
import { APPROVAL_ROUTES } from './own/approvals.page';
import { overviewPage } from './own/overview.page';
import { SECURITY_ROUTES } from './own/security.page';
import { loginDocument, signupDocument, welcomeDocument } from './own/sign-in.view';
import type { ConsoleRequest, ConsoleResult, ConsoleRoute, ConsoleSession } from './page';
import { PAGE_ROUTES } from './pages';

export interface ConsoleHttpRequest {
  method: string;
  path: string;
  query: Readonly<Record<string, string | undefined>>;
  /** Lower-case names. */
  headers: Readonly<Record<string, string | undefined>>;
  cookies: ReadonlyMap<string, string>;
  body: string | undefined;
  /** The client's address (API Gateway's sourceIp): what sign-in and sign-up limits count by. */
  address: string;
  now: Date;
}

export interface ConsoleHttpAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  cookies?: string[];
}

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

const FORM_MAX_BYTES = 8 * 1024;
const JSON_MAX_BYTES = 16 * 1024;

/** An answer; a page's links, actions and sources under the public base URL's path (`underBasePath`). */
const answer = (statusCode: number, body: string, extra: Partial<ConsoleHttpAnswer> = {}): ConsoleHttpAnswer => {
  const headers = { ...consoleHeaders(), ...extra.headers };
  return { statusCode, ...extra, body: headers['content-type']?.startsWith('text/html') ? underBasePath(body) : body, headers };
};

/** A 303 to a console path (under the base path) or to a whole URL. */
const redirect = (location: string, cookies?: string[]): ConsoleHttpAnswer =>
  answer(303, '', { headers: { location: publicPath(location) }, ...(cookies ? { cookies } : {}) });

const json = (statusCode: number, body: unknown, cookies?: string[]): ConsoleHttpAnswer =>
  answer(statusCode, JSON.stringify(body), { headers: { 'content-type': 'application/json' }, ...(cookies ? { cookies } : {}) });

/** Where the passkey script goes next (`location.assign`): a console path, under the base path. */
const goTo = (path: string, cookies?: string[]): ConsoleHttpAnswer => json(200, { redirect: publicPath(path) }, cookies);

/** A refusal whose text takes nothing. */
type FixedRefusal = { [C in RefusalCode]: RefusalArgs<C> extends [] ? C : never }[RefusalCode];

/** A catalogue refusal as the console's error page, with the entry's headers. */
function refusedPage(code: FixedRefusal, session?: Session): ConsoleHttpAnswer {
  const { status, text, headers } = renderRefusal(refuse(code));
  return answer(status, errorDocument(status, text, session), { headers });
}

/** A catalogue refusal as the passkey script's JSON `{"error": text}`. */
const refusedJson = (code: FixedRefusal): ConsoleHttpAnswer => json(refusalStatus(code), { error: refusalText(code) });

function errorDocument(status: number, message: string, session?: Session): string {
  const title = status >= 500 ? 'Something went wrong' : status === 404 ? 'Not found' : 'This could not be done';
  return consoleDocument({
    title,
    body: html`<p class="error" role="alert">${status >= 500 ? 'Something went wrong on our side. Nothing was changed; please try again in a moment.' : message}</p>
<p><a href="/console">Back to the overview</a></p>`,
    ...(session ? { signedIn: { csrfToken: session.csrfToken } } : {}),
  });
}

/** A request's urlencoded form; 400 for a field given twice (which one would count is anyone's guess). */
function parseForm(req: ConsoleHttpRequest): Record<string, string> {
  const type = req.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw refuse('consoleFormExpected');
  const text = req.body ?? '';
  if (Buffer.byteLength(text) > FORM_MAX_BYTES) throw refuse('consoleFormTooLarge');
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    if (Object.hasOwn(fields, name)) throw refuse('fieldGivenTwice', name);
    fields[name] = value;
  }
  return fields;
}

function parseJson(req: ConsoleHttpRequest): Record<string, unknown> {
  const type = req.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase();
  if (type !== 'application/json') throw refuse('consoleJsonExpected');
  const text = req.body ?? '';
  if (Buffer.byteLength(text) > JSON_MAX_BYTES) throw refuse('consoleJsonTooLarge');
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Falls through to the refusal.
  }
  throw refuse('invalidJsonBody');
}

/** The state-changing request came from the console's own pages: its Origin is the console's. */
const sameOrigin = (req: ConsoleHttpRequest): boolean => req.headers.origin === consoleBase().origin;

const isJson = (req: ConsoleHttpRequest) => req.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase() === 'application/json';

/** Everything a console request may be, answered. Errors of the framework's own become pages (or JSON for the script). */
export async function serveConsole(req: ConsoleHttpRequest): Promise<ConsoleHttpAnswer> {
  let session: Session | undefined;
  try {
    if (req.method !== 'GET' && req.method !== 'POST') {
      return refusedPage('consoleMethodNotAllowed');
    }
    // A GET on another host goes to the public address, where the cookie and the passkeys live, only
    // where requests for that address arrive with its own host (CONSOLE_HOST_REDIRECT: the stack's
    // custom domain). Behind a CDN they arrive with the origin's host, as a direct request does, and
    // the redirect would send every request back to itself (issue 38).
    const base = consoleBase();
    if (req.method === 'GET' && config().CONSOLE_HOST_REDIRECT && req.headers.host !== undefined && req.headers.host !== base.host) {
      const search = new URLSearchParams(Object.entries(req.query).filter((e): e is [string, string] => e[1] !== undefined)).toString();
      return redirect(`${base.origin}${basePath()}${req.path}${search ? `?${search}` : ''}`);
    }
    if (req.method === 'GET' && req.path.startsWith('/console/assets/')) {
      const asset = CONSOLE_ASSETS.get(req.path);
      if (!asset) return refusedPage('consoleNoSuchFile');
      return answer(200, asset.body, { headers: { 'content-type': asset.contentType, 'cache-control': IMMUTABLE } });
    }
    const signedOut = await signedOutRoute(req);
    if (signedOut) return signedOut;

    session = await resolveSession(req.cookies.get(sessionCookieName()), req.now);
    if (!session) {
      if (req.method === 'GET') {
        const search = new URLSearchParams(Object.entries(req.query).filter((e): e is [string, string] => e[1] !== undefined)).toString();
        return redirect(`/console/login?next=${encodeURIComponent(`${req.path}${search ? `?${search}` : ''}`)}`);
      }
      if (isJson(req)) return refusedJson('consoleSessionEnded');
      return redirect('/console/login');
    }
    let form: Record<string, string> = {};
    let body: Record<string, unknown> = {};
    if (req.method === 'POST') {
      if (isJson(req)) body = parseJson(req);
      else form = parseForm(req);
      const token = isJson(req) ? (typeof body.csrf === 'string' ? body.csrf : undefined) : form.csrf;
      if (!sameOrigin(req) || !csrfTokenMatches(session, token)) {
        return isJson(req) ? refusedJson('consoleForbidden') : refusedPage('consoleFormForbidden', session);
      }
      delete form.csrf;
      // What opened the session must still stand before it changes anything (DESIGN §24): a
      // rotation or a removal ends its sessions eagerly, and this closes the race with one.
      if (!(await confirmSession(session))) {
        const cleared = [clearedSessionCookie()];
        return isJson(req)
          ? json(refusalStatus('consoleSessionEnded'), { error: refusalText('consoleSessionEnded') }, cleared)
          : redirect('/console/login', cleared);
      }
    }
    const own = await signedInRoute(req, session, body);
    if (own) return own;
    return await page(req, session, form);
  } catch (error) {
    if (isRefusal(error)) {
      const { status, text, headers } = renderRefusal(error);
      if (status >= 500) logger().warn('service busy', { error: serializeError(error) });
      if (isJson(req)) return json(status, { error: text });
      return answer(status, errorDocument(status, text, session), { headers });
    }
    logger().error('unhandled error', { error: serializeError(error), route: `${req.method} console` });
    return isJson(req) ? refusedJson('internalError') : refusedPage('internalError', session);
  }
}

/** The routes that need no session. A POST among them must come from the console's origin (login CSRF). */
async function signedOutRoute(req: ConsoleHttpRequest): Promise<ConsoleHttpAnswer | undefined> {
  const key = `${req.method} ${req.path}`;
  const known = [
    'GET /console/login',
    'POST /console/login',
    'POST /console/login/options',
    'POST /console/login/verify',
    'GET /console/signup',
  ];
  if (!known.includes(key) && !key.startsWith('POST /console/signup/')) return undefined;
  if (req.method === 'POST' && !sameOrigin(req)) {
    return isJson(req) ? refusedJson('consoleForbidden') : refusedPage('consoleFormForbidden');
  }
  const rp = relyingParty();
  switch (key) {
    case 'GET /console/login': {
      const next = safeNext(req.query.next);
      return answer(200, loginDocument(next ? { next } : {}));
    }
    case 'GET /console/signup':
      return answer(200, signupDocument());
    case 'POST /console/login': {
      const form = parseForm(req);
      const next = safeNext(form.next);
      try {
        const { cookieValue } = await signInWithAccountKey(form.accountKey, req.address, req.now);
        return redirect(next ?? '/console', [sessionCookie(cookieValue)]);
      } catch (error) {
        if (isRefusal(error) && (error.statusCode === 401 || error.statusCode === 429)) {
          const { status, text, headers } = renderRefusal(error);
          return answer(status, loginDocument({ ...(next ? { next } : {}), error: text }), { headers });
        }
        throw error;
      }
    }
    case 'POST /console/login/options':
      return json(200, await signInOptions(rp, req.address, req.now));
    case 'POST /console/login/verify': {
      const body = parseJson(req);
      const { cookieValue } = await finishSignIn(rp, body.response as never, req.address, req.now);
      return goTo(safeNext(typeof body.next === 'string' ? body.next : undefined) ?? '/console', [sessionCookie(cookieValue)]);
    }
    case 'POST /console/signup/options': {
      const body = parseJson(req);
      const name = typeof body.name === 'string' ? body.name.trim().slice(0, 64) : '';
      return json(200, await signUpOptions(rp, name, req.address, req.now));
    }
    case 'POST /console/signup/verify': {
      const body = parseJson(req);
      const { cookieValue } = await finishSignUp(rp, body.response as never, req.address, req.now);
      return goTo('/console/welcome', [sessionCookie(cookieValue)]);
    }
    default:
      return refusedPage('consoleNoSuchPage');
  }
}

/** The framework's own signed-in routes: sign-out, the welcome page, the passkey ceremonies of Security. */
async function signedInRoute(
  req: ConsoleHttpRequest,
  session: Session,
  body: Record<string, unknown>,
): Promise<ConsoleHttpAnswer | undefined> {
  switch (`${req.method} ${req.path}`) {
    case 'GET /console/login':
      return redirect('/console');
    case 'POST /console/logout':
      await endSession(session);
      return redirect('/console/login', [clearedSessionCookie()]);
    case 'POST /console/security/sign-out-everywhere':
      await endAllSessions(session.userId);
      return redirect('/console/login', [clearedSessionCookie()]);
    case 'GET /console/welcome':
      return answer(200, welcomeDocument(await takeWelcome(session), session.csrfToken));
    // Adding a passkey (DESIGN §24): a fresh proof first — an assertion made for this (a passkey
    // session: `proof` gives its options), or the account key typed again (a key-opened session).
    case 'POST /console/security/passkeys/proof':
      return json(200, await addPasskeyProofOptions(relyingParty(), session, req.now));
    case 'POST /console/security/passkeys/options': {
      const proof = { accountKey: body.accountKey, assertion: body.assertion };
      return json(
        200,
        await addPasskeyOptions(relyingParty(), session, proof, typeof body.name === 'string' ? body.name : '', req.address, req.now),
      );
    }
    case 'POST /console/security/passkeys/verify':
      if (typeof body.response !== 'object' || body.response === null) throw refuse('passkeyResponseMissing');
      await finishAddPasskey(relyingParty(), session, body.response as never, req.now);
      return goTo('/console/security?done=added');
    default:
      return undefined;
  }
}

/** A page of OWN_ROUTES or PAGE_ROUTES, its answer rendered. */
async function page(req: ConsoleHttpRequest, session: Session, form: Record<string, string>): Promise<ConsoleHttpAnswer> {
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

function render(result: ConsoleResult, session: Session): ConsoleHttpAnswer {
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
      return redirect(result.location);
    case 'download':
      return answer(200, result.body, {
        headers: {
          'content-type': result.contentType,
          'content-disposition': `attachment; filename="${result.filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
        },
      });
  }
}
