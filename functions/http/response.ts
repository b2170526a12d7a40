import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { ApiResult } from '../contracts/api';
import { serialize } from '../contracts/json';

/** A use case's answer as API Gateway's response (JSON unless the answer says otherwise). */
export function toResponse(result: ApiResult): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: result.statusCode,
    headers: { 'content-type': 'application/json', ...result.headers },
    body: result.rawBody ?? serialize(result.body ?? {}),
  };
}

export function errorResponse(statusCode: number, message: string, headers: Record<string, string> = {}) {
  return toResponse({ statusCode, body: { error: message }, headers });
}
