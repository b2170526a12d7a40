/**
 * A thin node:http adapter: turns each request into the API Gateway HTTP API (v2) event the
 * route's Lambda would receive, calls the very same handler, and writes its result back.
 * Unmatched paths and methods go to the `$default` route, as on API Gateway.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { RouteSpec } from '../../functions/api/routes';
import type { RouteHandler } from '../../functions/http/handler';
import { type LocalHandler, type LocalRequest, sendJsonText } from './local-server';

export interface LoadedRoute {
  spec: RouteSpec;
  handler: RouteHandler;
}

interface CompiledRoute extends LoadedRoute {
  pattern: RegExp;
  params: string[];
  /** API Gateway's routeKey, e.g. `POST /api/v1/agents/charges` (built once, not per request). */
  routeKey: string;
}

/**
 * The routes as one local-server handler. The server (`startLocalServer`) reads the body up to
 * API Gateway's own 10 MiB payload limit; the handlers enforce the service's much smaller one.
 */
export function createRouteHandler(routes: LoadedRoute[]): LocalHandler {
  const compiled: CompiledRoute[] = [];
  let fallback: LoadedRoute | undefined;
  for (const route of routes) {
    if (route.spec.path === '$default') {
      fallback = route;
      continue;
    }
    const params: string[] = [];
    const source = route.spec.path
      .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
      .replace(/\\?\{(\w+)(\\\+)?\\?\}/g, (_, name: string, greedy?: string) => {
        params.push(name);
        // `{proxy+}`: the rest of the path, slashes and all, as API Gateway's greedy parameter.
        return greedy ? '(.+)' : '([^/]+)';
      });
    compiled.push({ ...route, pattern: new RegExp(`^${source}$`), params, routeKey: `${route.spec.method} ${route.spec.path}` });
  }
  if (!fallback) throw new Error('routes need a $default route');
  const defaultRoute = fallback;

  return async ({ method, url, body, raw }: LocalRequest, res: ServerResponse): Promise<void> => {
    let chosen: LoadedRoute = defaultRoute;
    let routeKey = '$default';
    let pathParameters: Record<string, string> | undefined;
    for (const route of compiled) {
      // The method first: a string comparison, before the pattern's match.
      if (route.spec.method !== method && route.spec.method !== 'ANY') continue;
      const match = route.pattern.exec(url.pathname);
      if (!match) continue;
      chosen = route;
      routeKey = route.routeKey;
      if (route.params.length > 0) {
        pathParameters = Object.fromEntries(route.params.map((name, i) => [name, safeDecode(match[i + 1] ?? '')]));
      }
      break;
    }
    const event = toEvent(raw, url, method, body, routeKey, pathParameters);
    write(res, await chosen.handler(event));
  };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function toEvent(
  req: IncomingMessage,
  url: URL,
  method: string,
  body: string,
  routeKey: string,
  pathParameters: Record<string, string> | undefined,
): APIGatewayProxyEventV2 {
  // Node has already lower-cased the names; only a repeated set-cookie arrives as an array.
  const headers: Record<string, string> = {};
  const given = req.headers;
  for (const name in given) {
    const value = given[name];
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  // Payload 2.0: API Gateway moves the Cookie header into `cookies`, one entry per cookie.
  const cookies = headers.cookie?.split(/;\s*/).filter((c) => c.length > 0);
  delete headers.cookie;
  // Most requests have no query string: no URLSearchParams built for them.
  const query: Record<string, string> = {};
  if (url.search.length > 1) {
    for (const [name, value] of url.searchParams) query[name] = name in query ? `${query[name]},${value}` : value;
  }
  const now = new Date();
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.replace(/^\?/, ''),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    ...(pathParameters ? { pathParameters } : {}),
    ...(cookies && cookies.length > 0 ? { cookies } : {}),
    ...(body.length > 0 ? { body } : {}),
    isBase64Encoded: false,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
  };
}

function write(res: ServerResponse, result: APIGatewayProxyStructuredResultV2): void {
  // API Gateway writes each of `cookies` as a Set-Cookie header of its own.
  if (result.cookies && result.cookies.length > 0) res.setHeader('set-cookie', result.cookies);
  sendJsonText(res, result.statusCode ?? 200, result.body ?? '', result.headers as Record<string, string>);
}
