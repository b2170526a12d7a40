/**
 * The stdio server's executor: each tool becomes the HTTP API request it stands for, sent to
 * BASE_URL with the agent key, so a local MCP client sees exactly what the API answers.
 * The key travels in a header on every call, so BASE_URL must be https (plain http only to this
 * machine's loopback, for `npm start`), and a redirect is never followed: fetch would send the
 * `x-agent-key` header along to wherever it points.
 */
import { isIP } from 'node:net';
import { stringify } from 'lossless-json';
import { isLoopbackAddress } from '../core/webhooks';
import { Refusal } from '../messages/refusal';
import { routeNamed } from '../registry/routes';
import type { ToolExecutor } from './server';

export const BASE_URL_RULE = 'BASE_URL must be https (plain http only to 127.0.0.1, ::1 or localhost)';

/** BASE_URL is not one the agent key may be sent to. */
export class BaseUrlError extends Error {
  constructor(baseUrl: string) {
    super(`${BASE_URL_RULE}: ${baseUrl}`);
    this.name = 'BaseUrlError';
  }
}

/** Whether the agent key may be sent to this base URL: https, or http to a loopback host. */
export function isAllowedBaseUrl(raw: string): boolean {
  if (!URL.canParse(raw)) return false;
  const url = new URL(raw);
  if (url.protocol === 'https:') return true;
  if (url.protocol !== 'http:') return false;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return host === 'localhost' || (isIP(host) !== 0 && isLoopbackAddress(host));
}

/** Throws BaseUrlError unless the key may be sent to `baseUrl`. */
export function overHttp(baseUrl: string, agentKey: string, fetchImpl: typeof fetch = fetch): ToolExecutor {
  if (!isAllowedBaseUrl(baseUrl)) throw new BaseUrlError(baseUrl);
  const base = baseUrl.replace(/\/+$/, '');
  return async (tool, args) => {
    const call = tool.http(args as never);
    const route = routeNamed(tool.route);
    const url = new URL(base + routePath(route.path, call.params ?? {}));
    for (const [name, value] of Object.entries(call.query ?? {})) if (value !== undefined) url.searchParams.set(name, value);
    const headers: Record<string, string> = { 'x-agent-key': agentKey };
    for (const [name, value] of Object.entries(call.headers ?? {})) if (value !== undefined) headers[name] = value;
    let body: string | undefined;
    if (call.body) {
      // LosslessNumber amounts are written as their literal text.
      body = stringify(call.body) ?? '{}';
      headers['content-type'] = 'application/json';
    }
    let res: Response;
    try {
      // `manual`: the redirect comes back as the answer it is, and is judged below by its status.
      res = await fetchImpl(url, { method: route.method, headers, redirect: 'manual', ...(body === undefined ? {} : { body }) });
    } catch (error) {
      // The agent should learn the service is unreachable, not see a generic failure.
      throw new Refusal('apiUnreachable', [base], { cause: error });
    }
    if (isRedirect(res)) {
      await res.body?.cancel();
      throw new Refusal('apiRedirected', [base]);
    }
    return { status: res.status, text: await res.text() };
  };
}

/** A route's path with its `{param}`s written in, each encoded as one path segment. */
export function routePath(path: string, params: Readonly<Record<string, string>>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`no value for {${name}} of ${path}`);
    return encodeURIComponent(value);
  });
}

/** The statuses that name another location to send the request to (RFC 9110 §15.4); 304 and 300 do not send it anywhere. */
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * A redirect, by the answer's structure: a redirect status (node's fetch under `manual`), or the
 * opaque redirect a browser-style fetch hands back instead (type `opaqueredirect`, status 0).
 */
export function isRedirect(res: Pick<Response, 'status' | 'type'>): boolean {
  return res.type === 'opaqueredirect' || REDIRECT_STATUSES.has(res.status);
}
