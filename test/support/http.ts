/**
 * A small HTTP client for end-to-end tests against the local stack. Every answer is checked
 * against docs/openapi.json (test/support/contract.ts): one the document does not describe throws.
 */
import { checkResponse } from './contract';

export interface Reply<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export function client(baseUrl: string) {
  return async function call<T = Record<string, unknown>>(
    method: string,
    path: string,
    opts: { headers?: Record<string, string>; body?: unknown; raw?: string } = {},
  ): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    let body: string | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    // fetch would label a string body text/plain; the API refuses any type but JSON (415).
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(baseUrl + path, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    // fetch follows redirects: check the answer of the request it ended with (a 303 continues as GET).
    checkResponse(res.redirected ? 'GET' : method, res.url || baseUrl + path, res.status, res.headers, text);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  };
}
