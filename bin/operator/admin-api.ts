/**
 * `npm run admin -- --api <baseUrl>`: the operator's commands as requests to the admin API, signed
 * with SigV4 where the stage authorizes the admin routes with IAM (sigv4.ts), or carrying the
 * x-admin-key header where it takes the static key (`npm start`, a stage with adminAuth `key`).
 * Touches no table and loads none of the service's modules: the API does the work.
 */
import { isNumber } from 'lossless-json';
import { type Answer, answer } from './answer';
import { type RequestSigner, regionOfApiUrl, requestSigner } from './sigv4';

/** One admin API call, as a command makes it. */
export interface AdminRequest {
  method: 'GET' | 'POST' | 'PATCH';
  /** Below the base URL, already encoded (segments through `segment`). */
  path: string;
  /** The JSON body, as the exact text to send (and sign). */
  body?: string;
  idempotencyKey?: string;
}

/** How requests prove they come from the operator. */
export type AdminCredential = { adminKey: string } | { signer: RequestSigner };

/** The operator gave `--api` with something wrong around it (no region to sign for, a bad URL). */
export class ApiUsageError extends Error {}

/** A path segment from an operator's argument (an id): encoded, so it stays one segment. */
export const segment = (text: string) => encodeURIComponent(text);

/**
 * The credit body `POST /admin/users/{id}/credits` reads, from the text the operator typed: an
 * amount that is a JSON number literal goes as that literal (never through a float); anything else
 * goes as a string, which the API refuses with its own message (`amount must be a number`).
 */
export function creditBody(amount: string, currency: string): string {
  return `{"amount":${isNumber(amount) ? amount : JSON.stringify(amount)},"currency":${JSON.stringify(currency)}}`;
}

/** `{"amount": …}` (a refund's), from the text the operator typed, as `creditBody` reads it. */
export function amountBody(amount: string): string {
  return `{"amount":${isNumber(amount) ? amount : JSON.stringify(amount)}}`;
}

/** Reads `--api`, and decides how to authenticate: the admin key when one is given, SigV4 otherwise. */
export async function adminApiTarget(options: {
  api: string;
  adminKey?: string | undefined;
  region?: string | undefined;
  env: NodeJS.ProcessEnv;
}): Promise<{ baseUrl: URL; credential: AdminCredential }> {
  let baseUrl: URL;
  try {
    baseUrl = new URL(options.api.endsWith('/') ? options.api : `${options.api}/`);
  } catch {
    throw new ApiUsageError(`--api wants the API's base URL (the ApiUrl output, or npm start's), not ${JSON.stringify(options.api)}`);
  }
  if (baseUrl.protocol !== 'https:' && baseUrl.protocol !== 'http:') throw new ApiUsageError('--api wants an http(s) URL');
  const adminKey = options.adminKey ?? options.env.ADMIN_KEY;
  if (adminKey) return { baseUrl, credential: { adminKey } };
  // Only a custom domain hides the region; an explicit --region still wins (a proxy in front).
  const region = options.region ?? regionOfApiUrl(baseUrl) ?? options.env.AWS_REGION ?? options.env.AWS_DEFAULT_REGION;
  if (!region) throw new ApiUsageError('no region to sign for: pass --region or set AWS_REGION (or give --admin-key)');
  // The standard chain: environment, SSO, AWS_PROFILE's files, process, web identity, container, instance.
  const { defaultProvider } = await import('@aws-sdk/credential-provider-node');
  return { baseUrl, credential: { signer: requestSigner({ region, credentials: defaultProvider() }) } };
}

/** Sends one request and reads the answer as the CLI prints it. */
export async function callAdminApi(baseUrl: URL, credential: AdminCredential, request: AdminRequest): Promise<Answer> {
  const url = new URL(request.path.replace(/^\//, ''), baseUrl);
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(request.idempotencyKey === undefined ? {} : { 'idempotency-key': request.idempotencyKey }),
  };
  let sent: Record<string, string>;
  if ('adminKey' in credential) {
    sent = { ...headers, 'x-admin-key': credential.adminKey };
  } else {
    const signed = await credential.signer({
      method: request.method,
      url,
      headers,
      ...(request.body === undefined ? {} : { body: request.body }),
    });
    // fetch sends Host from the URL itself, the very value that was signed.
    const { host: _, ...rest } = signed;
    sent = rest;
  }
  const res = await fetch(url, { method: request.method, headers: sent, ...(request.body === undefined ? {} : { body: request.body }) });
  return answer(res.status, await res.text());
}
