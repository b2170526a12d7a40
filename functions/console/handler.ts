/**
 * The console's Lambda (DESIGN §21): every `/console` request, GET or POST, in one function with
 * its own throttle and grants (functions/api/routes.ts `console`, `console-pages`). API Gateway's
 * payload 2.0 gives cookies as `cookies` and takes `cookies` back as Set-Cookie headers.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { RouteHandler } from '../http/handler';
import { requestContext } from '../observability/logger';
import { metricsMiddleware } from '../observability/metrics';
import { parseCookies } from './http';
import { serveConsole } from './router';

// Its configuration (the relying party and the only Origin accepted come from PUBLIC_BASE_URL; Add
// funds opens top-ups; Developers seals webhook secrets) is checked at init by the route's own
// handler files, functions/api/console*.handler.ts, from the registry's needs.

async function serve(event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) headers[name.toLowerCase()] = value;
  const body =
    event.body === undefined || event.body === null
      ? undefined
      : event.isBase64Encoded
        ? Buffer.from(event.body, 'base64').toString('utf8')
        : event.body;
  const out = await serveConsole({
    method: event.requestContext?.http?.method ?? 'GET',
    path: event.rawPath ?? event.requestContext?.http?.path ?? '/console',
    query: event.queryStringParameters ?? {},
    headers,
    cookies: parseCookies(event.cookies, headers.cookie),
    body,
    address: event.requestContext?.http?.sourceIp ?? 'unknown',
    now: new Date(),
  });
  return { statusCode: out.statusCode, headers: out.headers, body: out.body, ...(out.cookies ? { cookies: out.cookies } : {}) };
}

const wrapped = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>()
  .use(requestContext<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>((event) => event.requestContext?.requestId))
  .use(metricsMiddleware())
  .handler(serve);

export const handler: RouteHandler = (event, context) => wrapped(event, context ?? ({} as Context));
