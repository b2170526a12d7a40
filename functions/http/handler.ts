import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { metricsMiddleware } from '../observability/metrics';
import { errorMapper } from './error-mapper';
import { type HttpRequest, toRequest } from './request';
import { type HttpResult, toResponse } from './response';

export type RouteHandler = (event: APIGatewayProxyEventV2, context?: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/** Wraps a route function in the house middy stack: request adapter → fn → response, errors mapped. */
export function httpHandler(fn: (req: HttpRequest) => Promise<HttpResult>): RouteHandler {
  const wrapped = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>()
    .use(metricsMiddleware())
    .use(errorMapper())
    .handler(async (event) => toResponse(await fn(toRequest(event))));
  // Lambda passes a context; the local adapter and tests may not.
  return (event, context) => wrapped(event, context ?? ({} as Context));
}
