import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { renderRefusal } from '../contracts/outcome';
import { Refusal, refuse } from '../messages/refusal';
import { logger } from '../observability/logger';
import { serializeError } from '../observability/serialize-error';
import { errorResponse } from './response';

/** Writes an error's status and public message as a response (JSON `{"error": …}` by default). */
export type ErrorRenderer = (statusCode: number, message: string, headers?: Record<string, string>) => APIGatewayProxyStructuredResultV2;

/**
 * The one place errors become HTTP responses: a Refusal is answered as the catalogue gives it;
 * anything else is a 500 with a generic message and its cause logged (never sent). `render` only
 * changes how that answer is written (the approval page answers in HTML), never which it is.
 */
export function errorMapper(
  render: ErrorRenderer = errorResponse,
): MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  return {
    onError: async (request) => {
      const error = request.error;
      if (error instanceof Refusal) {
        const refusal = renderRefusal(error);
        if (refusal.status >= 500) logger().warn('service busy', { error: serializeError(error) });
        request.response = render(refusal.status, refusal.text, refusal.headers);
        return;
      }
      logger().error('unhandled error', { error: serializeError(error), route: request.event?.routeKey });
      const internal = renderRefusal(refuse('internalError'));
      request.response = render(internal.status, internal.text);
    },
  };
}
