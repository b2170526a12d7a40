import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { renderRefusal } from '../contracts/outcome';
import { Refusal, refuse } from '../messages/refusal';
import { logger } from '../observability/logger';
import { serializeError } from '../observability/serialize-error';
import { errorResponse } from './response';

/** Writes an error's status and public message as a response (JSON `{"error": …}` by default). */
export type ErrorRenderer = (statusCode: number, message: string, headers?: Record<string, string>) => APIGatewayProxyStructuredResultV2;

/** What an error is answered with: its status, public text and headers (Retry-After, …). */
export interface MappedError {
  status: number;
  text: string;
  headers?: Record<string, string>;
}

/**
 * The one place errors become answers: a Refusal is answered as the catalogue gives it (a 5xx one
 * logged as the service being busy); anything else is a 500 with a generic message and its cause
 * logged (never sent). `route` names where it happened in the log line. The middleware below and
 * the console's router (which writes the answer as a page of the signed-in payer's console) both
 * call it: how the answer is written differs, never which it is.
 */
export function mapError(error: unknown, route: string | undefined): MappedError {
  if (error instanceof Refusal) {
    const refusal = renderRefusal(error);
    if (refusal.status >= 500) logger().warn('service busy', { error: serializeError(error) });
    return refusal;
  }
  logger().error('unhandled error', { error: serializeError(error), route });
  const internal = renderRefusal(refuse('internalError'));
  return { status: internal.status, text: internal.text };
}

/**
 * The error mapping as middy middleware. `render` only changes how the answer is written (the
 * approval and consent pages answer in HTML: http/page.ts `htmlErrorResponse`), never which it is.
 */
export function errorMapper(
  render: ErrorRenderer = errorResponse,
): MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  return {
    onError: async (request) => {
      const { status, text, headers } = mapError(request.error, request.event?.routeKey);
      request.response = headers ? render(status, text, headers) : render(status, text);
    },
  };
}
