import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { ApiResult } from '../contracts/api';
import { serialize } from '../contracts/json';

/**
 * Every answer is `Cache-Control: no-store` unless it says otherwise (the public OpenAPI
 * document): many carry a key, a webhook secret or an approval link, none is worth caching, and
 * a rule for all cannot miss a new route that hands out a secret (docs/approvals.md "Caching").
 */
const NO_STORE = { 'cache-control': 'no-store' };

/** A use case's answer as API Gateway's response (JSON unless the answer says otherwise). */
export function toResponse(result: ApiResult): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: result.statusCode,
    headers: { 'content-type': 'application/json', ...NO_STORE, ...result.headers },
    body: result.rawBody ?? serialize(result.body ?? {}),
  };
}

export function errorResponse(statusCode: number, message: string, headers: Record<string, string> = {}) {
  return toResponse({ statusCode, body: { error: message }, headers });
}
