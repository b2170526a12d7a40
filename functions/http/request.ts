import type {
  APIGatewayEventRequestContextIAMAuthorizer,
  APIGatewayEventRequestContextV2WithAuthorizer,
  APIGatewayProxyEventV2,
} from 'aws-lambda';
import { ConfigurationError, config } from '../config';
import type { ApiRequest } from '../contracts/api';

/** The request a use case sees (contracts/api.ts) from an API Gateway HTTP API (v2) event. */
export function toRequest(event: APIGatewayProxyEventV2): ApiRequest {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) headers[name.toLowerCase()] = value;
  // Payload 2.0 moves the Cookie header into `cookies`: put it back where a page (the consent page's session) reads it.
  if (event.cookies && event.cookies.length > 0) headers.cookie = event.cookies.join('; ');
  const body =
    event.body === undefined || event.body === null
      ? undefined
      : event.isBase64Encoded
        ? Buffer.from(event.body, 'base64').toString('utf8')
        : event.body;
  return {
    method: event.requestContext?.http?.method ?? 'GET',
    path: event.rawPath ?? event.requestContext?.http?.path ?? '/',
    headers,
    query: event.queryStringParameters ?? {},
    params: event.pathParameters ?? {},
    body,
    requestId: event.requestContext?.requestId ?? '',
    ...(event.requestContext?.http?.sourceIp ? { sourceIp: event.requestContext.http.sourceIp } : {}),
    ...iamCallerOf(event),
  };
}

/** API Gateway's IAM verdict, when there is one (the plain v2 event type does not declare `authorizer`). */
function iamCallerOf(event: APIGatewayProxyEventV2): { iamCaller?: string } {
  const context = event.requestContext as Partial<
    APIGatewayEventRequestContextV2WithAuthorizer<APIGatewayEventRequestContextIAMAuthorizer>
  >;
  const iam = context?.authorizer?.iam;
  if (!iam) return {};
  // userArn names the signer (an assumed role's session, a user); callerId is never empty either.
  return { iamCaller: iam.userArn || iam.callerId || 'unknown IAM principal' };
}

/**
 * The API's public address for the links it hands out: PUBLIC_BASE_URL, which every function that
 * makes links requires at init (NEEDS_PUBLIC_BASE_URL). Never the request's Host or
 * x-forwarded-* headers: a client chooses those, and an approval link built from them could send
 * a payer (and the link's token) to another site.
 */
export function publicBaseUrl(): string {
  const configured = config().PUBLIC_BASE_URL;
  if (!configured) throw new ConfigurationError('missing configuration: PUBLIC_BASE_URL is not set');
  return configured.replace(/\/+$/, '');
}

/**
 * The public base URL's path: `/pay` for `https://api.example.com/pay`, '' at the root. Pages are
 * served under it, though their functions see paths without it (an API mapping or the CDN strips
 * it: docs/deploy.md, "Addresses").
 */
export const basePath = (): string => new URL(publicBaseUrl()).pathname.replace(/\/+$/, '');

/** A root-relative path (`/console/activity`) as the browser asks for it: under the base path. Anything else as it is. */
export const publicPath = (path: string): string => (path.startsWith('/') && !path.startsWith('//') ? `${basePath()}${path}` : path);

/**
 * A request's cookies by name, from its Cookie header (toRequest puts API Gateway's `cookies` there).
 * The first of a name wins, as browsers send the most specific first.
 */
export function cookiesOf(req: Pick<ApiRequest, 'headers'>): Map<string, string> {
  const out = new Map<string, string>();
  for (const pair of (req.headers.cookie ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const name = pair.slice(0, at).trim();
    if (!out.has(name)) out.set(name, pair.slice(at + 1).trim());
  }
  return out;
}
