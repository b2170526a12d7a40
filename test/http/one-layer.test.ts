/**
 * The one HTTP layer the API and the console share (DESIGN §25): form and JSON bodies read by one
 * module with each route's own refusals, one error mapping whatever writes the answer, cookies
 * from the request adapter, and the answer's cookies written back for API Gateway.
 */
import type { ApiRequest } from '../../functions/contracts/api';
import { readFormFields, readJsonObject } from '../../functions/http/body';
import { mapError } from '../../functions/http/error-mapper';
import { cookiesOf, toRequest } from '../../functions/http/request';
import { toResponse } from '../../functions/http/response';
import { isRefusal, refuse } from '../../functions/messages/refusal';

const req = (contentType: string | undefined, body: string): ApiRequest => ({
  method: 'POST',
  path: '/console/grants',
  headers: contentType ? { 'content-type': contentType } : {},
  query: {},
  params: {},
  body,
  requestId: 'r',
});

const refusalOf = (fn: () => unknown): [number, string] => {
  try {
    fn();
  } catch (error) {
    if (isRefusal(error)) return [error.statusCode, error.message];
    throw error;
  }
  throw new Error('expected a refusal');
};

describe('the body readers', () => {
  it("reads a form's fields, and refuses a field given twice", () => {
    expect(readFormFields(req('application/x-www-form-urlencoded; charset=utf-8', 'a=1&b=x+y'), { maxBytes: 100 })).toEqual({
      a: '1',
      b: 'x y',
    });
    expect(refusalOf(() => readFormFields(req('application/x-www-form-urlencoded', 'a=1&a=2'), { maxBytes: 100 }))[0]).toBe(400);
  });

  it("answers a wrong type or size with the API's 415 and 413, or with a route's own refusals (the console's 400s)", () => {
    expect(refusalOf(() => readFormFields(req('application/json', '{}'), { maxBytes: 100 }))).toEqual([
      415,
      'content-type must be application/x-www-form-urlencoded',
    ]);
    expect(refusalOf(() => readFormFields(req('application/x-www-form-urlencoded', 'a=12345'), { maxBytes: 4 }))).toEqual([
      413,
      'request body too large',
    ]);
    const own = { wrongType: () => refuse('consoleFormExpected'), tooLarge: () => refuse('consoleFormTooLarge') };
    expect(refusalOf(() => readFormFields(req(undefined, 'a=1'), { maxBytes: 100, ...own }))).toEqual([400, 'a form was expected']);
    expect(refusalOf(() => readFormFields(req('application/x-www-form-urlencoded', 'a=12345'), { maxBytes: 4, ...own }))).toEqual([
      400,
      'the form is too large',
    ]);
  });

  it('reads a small JSON object as the browser wrote it, and refuses anything but an object', () => {
    expect(readJsonObject(req('application/json', '{"n":1.5,"s":"x"}'), { maxBytes: 100 })).toEqual({ n: 1.5, s: 'x' });
    for (const body of ['[1]', '"x"', 'null', '{']) {
      expect(refusalOf(() => readJsonObject(req('application/json', body), { maxBytes: 100 }))).toEqual([400, 'invalid json body']);
    }
  });
});

describe('the error mapping', () => {
  it('answers a refusal as the catalogue gives it, and anything else as a 500 that says nothing of its cause', () => {
    expect(mapError(refuse('consoleFormTooLarge'), 'POST console')).toMatchObject({ status: 400, text: 'the form is too large' });
    const internal = mapError(new Error('secret detail'), 'POST console');
    expect(internal.status).toBe(500);
    expect(internal.text).not.toContain('secret detail');
  });
});

describe('cookies', () => {
  it("reads API Gateway's cookies through the request adapter, the first of a name winning", () => {
    const request = toRequest({
      version: '2.0',
      routeKey: 'ANY /console',
      rawPath: '/console',
      rawQueryString: '',
      cookies: ['console=abc', 'console-tz=Europe%2FLisbon', 'console=later'],
      headers: {},
      isBase64Encoded: false,
      requestContext: { http: { method: 'GET', path: '/console', sourceIp: '203.0.113.9' }, requestId: 'r' },
    } as never);
    expect([...cookiesOf(request)]).toEqual([
      ['console', 'abc'],
      ['console-tz', 'Europe%2FLisbon'],
    ]);
    expect(request.sourceIp).toBe('203.0.113.9');
  });

  it('writes the cookies an answer sets for API Gateway to send as Set-Cookie headers', () => {
    expect(toResponse({ statusCode: 303, rawBody: '', cookies: ['console=x; Path=/'] }).cookies).toEqual(['console=x; Path=/']);
    expect(toResponse({ statusCode: 200, body: {} })).not.toHaveProperty('cookies');
  });
});
