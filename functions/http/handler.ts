import { randomUUID } from 'node:crypto';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { loadConfig } from '../config';
import type { ApiRequest } from '../contracts/api';
import { requestContext } from '../observability/logger';
import { metricsMiddleware } from '../observability/metrics';
import { type ErrorRenderer, errorMapper } from './error-mapper';
import { toRequest } from './request';
import { toResponse, type WebAnswer } from './response';

export type RouteHandler = (event: APIGatewayProxyEventV2, context?: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * Wraps a route function in the house middy stack: request adapter → fn → response, errors mapped,
 * log lines tagged with the request ids. Called at module scope of a handler file, so it parses the
 * shared configuration there: a function whose environment lacks something fails its init, naming
 * it. A route that needs more says so with its own `loadConfig({ require })` (withdraw.handler.ts):
 * what its registry entry's capabilities call for (functions/registry/routes.ts `configNeeds`), which
 * test/observability/config-init.test.ts checks. Not imported here: the route table would weigh on
 * every function's bundle (~19 KB, past the API functions' budget).
 * `errors` writes error answers in another format (HTML pages: http/page.ts); JSON by default.
 */
export function httpHandler(fn: (req: ApiRequest) => Promise<WebAnswer>, options: { errors?: ErrorRenderer } = {}): RouteHandler {
  loadConfig();
  const wrapped = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>()
    .use(requestContext<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>((event) => event.requestContext?.requestId))
    .use(metricsMiddleware())
    .use(errorMapper(options.errors))
    .handler(async (event) => toResponse(await fn(toRequest(event))));
  // Lambda passes a context; the local adapter and tests may not.
  return async (event, context) => {
    const requestId = event.requestContext?.requestId || randomUUID();
    const identified = event.requestContext?.requestId ? event : { ...event, requestContext: { ...event.requestContext, requestId } };
    const response = await wrapped(identified, context ?? ({} as Context));
    return { ...response, headers: { ...response.headers, [REQUEST_ID_HEADER]: requestId } };
  };
}

/**
 * Every answer names its request: API Gateway's request id (the one its access log and the
 * function's log lines carry as correlation_id), or a fresh one where no gateway gave one. A
 * client quoting it lets the operator find the request's log lines.
 */
export const REQUEST_ID_HEADER = 'x-request-id';
