import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { ApiResult } from '../contracts/api';
import { serialize } from '../contracts/json';
import { basePath } from './request';

/**
 * Every answer is `Cache-Control: no-store` unless it says otherwise (the public OpenAPI
 * document): many carry a key, a webhook secret or an approval link, none is worth caching, and
 * a rule for all cannot miss a new route that hands out a secret (docs/approvals.md "Caching").
 */
const NO_STORE = { 'cache-control': 'no-store' };

/** An answer, with the cookies it sets (the console's session: API Gateway writes each as a Set-Cookie header). */
export interface WebAnswer extends ApiResult {
  cookies?: string[];
}

/** A use case's or a page's answer as API Gateway's response (JSON unless the answer says otherwise). */
export function toResponse(result: WebAnswer): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: result.statusCode,
    headers: { 'content-type': 'application/json', ...NO_STORE, ...result.headers },
    body: result.rawBody ?? serialize(result.body ?? {}),
    ...(result.cookies ? { cookies: result.cookies } : {}),
  };
}

/** Static assets: named by their content's hash, so a year's immutable caching is safe. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * Markup with every root-relative link, form action and script or image source under the public
 * base URL's path (`basePath`). Only markup can hold `href="/`: every value written into a page is
 * escaped (a `"` in one is `&quot;`), so no text a payer or an agent wrote is rewritten.
 */
export function underBasePath(markup: string): string {
  const base = basePath();
  return base === '' ? markup : markup.replace(/\b(href|action|src|formaction)="\/(?!\/)/g, `$1="${base}/`);
}

export function errorResponse(statusCode: number, message: string, headers: Record<string, string> = {}) {
  return toResponse({ statusCode, body: { error: message }, headers });
}
