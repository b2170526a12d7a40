/**
 * The console's session routes (DESIGN §21, §24): the signed-out ones — sign-in with the account
 * key or a passkey, sign-up with a passkey (a POST among them must come from the console's origin:
 * no login CSRF) — and the signed-in ones that are about the session itself: sign-out, sign-out
 * everywhere, the welcome page, and the passkey ceremonies of Security. The pages are router.ts's.
 */
import type { ApiRequest } from '../contracts/api';
import { renderRefusal } from '../contracts/outcome';
import type { WebAnswer } from '../http/response';
import { isRefusal, refuse } from '../messages/refusal';
import { endAllSessions, endSession, type Session, signInWithAccountKey, takeWelcome } from '../use-cases/identity/console-sessions';
import {
  addPasskeyOptions,
  addPasskeyProofOptions,
  finishAddPasskey,
  finishSignIn,
  finishSignUp,
  signInOptions,
  signUpOptions,
} from '../use-cases/identity/passkeys';
import { answer, goTo, isJson, json, readForm, readJson, redirect, refusedJson, refusedPage } from './answers';
import { loginDocument, signupDocument, welcomeDocument } from './own/sign-in.view';
import { clearedSessionCookie, relyingParty, safeNext, sameOrigin, sessionCookie } from './session';

/** A console request as its routes read it: the HTTP layer's request, with the client's address and the time. */
export interface ConsoleHttpRequest extends ApiRequest {
  cookies: ReadonlyMap<string, string>;
  /** The client's address (API Gateway's sourceIp): what sign-in and sign-up limits count by. */
  address: string;
  now: Date;
}

const SIGNED_OUT = [
  'GET /console/login',
  'POST /console/login',
  'POST /console/login/options',
  'POST /console/login/verify',
  'GET /console/signup',
];

/** The routes that need no session; undefined for any other. */
export async function signedOutRoute(req: ConsoleHttpRequest): Promise<WebAnswer | undefined> {
  const key = `${req.method} ${req.path}`;
  if (!SIGNED_OUT.includes(key) && !key.startsWith('POST /console/signup/')) return undefined;
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
    case 'POST /console/login':
      return signInWithKey(req);
    case 'POST /console/login/options':
      return json(200, await signInOptions(rp, req.address, req.now));
    case 'POST /console/login/verify': {
      const body = readJson(req);
      const { cookieValue } = await finishSignIn(rp, body.response as never, req.address, req.now);
      return goTo(safeNext(typeof body.next === 'string' ? body.next : undefined) ?? '/console', [sessionCookie(cookieValue)]);
    }
    case 'POST /console/signup/options': {
      const body = readJson(req);
      const name = typeof body.name === 'string' ? body.name.trim().slice(0, 64) : '';
      return json(200, await signUpOptions(rp, name, req.address, req.now));
    }
    case 'POST /console/signup/verify': {
      const body = readJson(req);
      const { cookieValue } = await finishSignUp(rp, body.response as never, req.address, req.now);
      return goTo('/console/welcome', [sessionCookie(cookieValue)]);
    }
    default:
      return refusedPage('consoleNoSuchPage');
  }
}

/** The account key's sign-in form: a wrong key or too many tries is the sign-in page again, saying so. */
async function signInWithKey(req: ConsoleHttpRequest): Promise<WebAnswer> {
  const form = readForm(req);
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

/** The signed-in routes about the session itself; undefined for the pages. */
export async function signedInRoute(
  req: ConsoleHttpRequest,
  session: Session,
  body: Record<string, unknown>,
): Promise<WebAnswer | undefined> {
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
      const name = typeof body.name === 'string' ? body.name : '';
      return json(200, await addPasskeyOptions(relyingParty(), session, proof, name, req.address, req.now));
    }
    case 'POST /console/security/passkeys/verify':
      if (typeof body.response !== 'object' || body.response === null) throw refuse('passkeyResponseMissing');
      await finishAddPasskey(relyingParty(), session, body.response as never, req.now);
      return goTo('/console/security?done=added');
    default:
      return undefined;
  }
}
