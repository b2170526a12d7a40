/**
 * How the console answers (DESIGN §21), written by the one HTTP layer (http/): a page in the shell
 * with the console's headers and its links under the public base URL's path, a 303 to a console
 * path, the passkey script's JSON, an error as a page of the console (or as the script's
 * `{"error": …}`), and the console's bodies read by http/body.ts with the console's own refusals.
 */

import type { ApiRequest } from '../contracts/api';
import { renderRefusal } from '../contracts/outcome';
import { mediaTypeOf, readFormFields, readJsonObject } from '../http/body';
import { mapError } from '../http/error-mapper';
import { html } from '../http/html';
import { consoleHeaders } from '../http/page';
import { publicPath } from '../http/request';
import { underBasePath, type WebAnswer } from '../http/response';
import { type RefusalArgs, type RefusalCode, refusalStatus, refusalText } from '../messages/catalogue';
import { refuse } from '../messages/refusal';
import type { Session } from '../use-cases/identity/console-sessions';
import { consoleDocument } from './layout';

const FORM_MAX_BYTES = 8 * 1024;
const JSON_MAX_BYTES = 16 * 1024;

/** An answer with the console's headers; a page's links, actions and sources under the public base URL's path. */
export function answer(statusCode: number, body: string, extra: { headers?: Record<string, string>; cookies?: string[] } = {}): WebAnswer {
  const headers = { ...consoleHeaders(), ...extra.headers };
  const rawBody = headers['content-type']?.startsWith('text/html') ? underBasePath(body) : body;
  return { statusCode, headers, rawBody, ...(extra.cookies ? { cookies: extra.cookies } : {}) };
}

/** A 303 to a console path (under the base path) or to a whole URL. */
export const redirect = (location: string, cookies?: string[]): WebAnswer =>
  answer(303, '', { headers: { location: publicPath(location) }, ...(cookies ? { cookies } : {}) });

export const json = (statusCode: number, body: unknown, cookies?: string[]): WebAnswer =>
  answer(statusCode, JSON.stringify(body), { headers: { 'content-type': 'application/json' }, ...(cookies ? { cookies } : {}) });

/** Where the passkey script goes next (`location.assign`): a console path, under the base path. */
export const goTo = (path: string, cookies?: string[]): WebAnswer => json(200, { redirect: publicPath(path) }, cookies);

/** A refusal whose text takes nothing. */
type FixedRefusal = { [C in RefusalCode]: RefusalArgs<C> extends [] ? C : never }[RefusalCode];

/** A catalogue refusal as the console's error page, with the entry's headers. */
export function refusedPage(code: FixedRefusal, session?: Session): WebAnswer {
  const { status, text, headers } = renderRefusal(refuse(code));
  return answer(status, errorDocument(status, text, session), { headers });
}

/** A catalogue refusal as the passkey script's JSON `{"error": text}`. */
export const refusedJson = (code: FixedRefusal, cookies?: string[]): WebAnswer =>
  json(refusalStatus(code), { error: refusalText(code) }, cookies);

/** Any error, mapped by the one error mapping (http/error-mapper.ts), written as the script's JSON or a console page. */
export function errorAnswer(req: ApiRequest, error: unknown, session: Session | undefined): WebAnswer {
  const { status, text, headers } = mapError(error, `${req.method} console`);
  if (isJson(req)) return json(status, { error: text });
  return answer(status, errorDocument(status, text, session), headers ? { headers } : {});
}

function errorDocument(status: number, message: string, session?: Session): string {
  const title = status >= 500 ? 'Something went wrong' : status === 404 ? 'Not found' : 'This could not be done';
  return consoleDocument({
    title,
    body: html`<p class="error" role="alert">${status >= 500 ? 'Something went wrong on our side. Nothing was changed; please try again in a moment.' : message}</p>
<p><a href="/console">Back to the overview</a></p>`,
    ...(session ? { signedIn: { csrfToken: session.csrfToken } } : {}),
  });
}

export const isJson = (req: ApiRequest): boolean => mediaTypeOf(req) === 'application/json';

/** A console form's fields (400s of the console's own for a body that is not a small form). */
export const readForm = (req: ApiRequest): Record<string, string> =>
  readFormFields(req, {
    maxBytes: FORM_MAX_BYTES,
    wrongType: () => refuse('consoleFormExpected'),
    tooLarge: () => refuse('consoleFormTooLarge'),
  });

/** The passkey script's JSON object (400s of the console's own for a body that is not a small JSON object). */
export const readJson = (req: ApiRequest): Record<string, unknown> =>
  readJsonObject(req, {
    maxBytes: JSON_MAX_BYTES,
    wrongType: () => refuse('consoleJsonExpected'),
    tooLarge: () => refuse('consoleJsonTooLarge'),
  });
