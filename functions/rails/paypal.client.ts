/**
 * The PayPal REST API over HTTP, as the payout rail needs it: OAuth2 client credentials with a
 * cached token, and one authenticated JSON call that sorts answers into "transient, try again
 * later" (thrown) and "PayPal decided" (returned). It knows nothing about payouts.
 */
import { config } from '../config';
import { RailConfigError, RailUnavailableError } from './errors';
import { type PaypalCredentials, paypalCredentialsSchema, tokenResponseSchema } from './paypal.schemas';
import { readRailSecret } from './rail-secret';

export interface PaypalClientOptions {
  /** Defaults: PAYPAL_BASE_URL and PAYPAL_CLIENT_ID/SECRET (or PAYPAL_CREDENTIALS_SECRET_ARN). */
  baseUrl?: string;
  credentials?: () => Promise<PaypalCredentials>;
  /** Per HTTP request; a hung API is a transient error. */
  requestTimeoutMs?: number;
  /** Clock for the token cache (tests). */
  now?: () => number;
}

/** An answer PayPal gave on purpose: 2xx or a 4xx other than a token that stayed refused. */
export interface PaypalResponse {
  status: number;
  /** Parsed JSON, or undefined when the body was empty or not JSON. */
  body: unknown;
}

/** A token is refreshed this long before PayPal says it expires. */
const TOKEN_MARGIN_MS = 60_000;

/** One per rail, kept for the container's life: the token and the credentials are cached on it. */
export class PaypalClient {
  private token: { value: string; expiresAt: number } | undefined;
  private tokenRequest: Promise<string> | undefined;
  private credentials: Promise<PaypalCredentials> | undefined;
  private readonly requestTimeoutMs: number;
  private readonly now: () => number;

  constructor(private readonly options: PaypalClientOptions = {}) {
    this.requestTimeoutMs = options.requestTimeoutMs ?? 15_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * One authenticated JSON call. Network errors, timeouts, 408, 429 and 5xx throw `RailUnavailableError`.
   * `beforeSend` runs once, after the token is in hand and right before the request first leaves:
   * up to there nothing of the call reached PayPal's API.
   */
  async call(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    beforeSend?: () => Promise<void>,
  ): Promise<PaypalResponse> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.accessToken();
      if (attempt === 0) await beforeSend?.();
      const res = await this.fetch(path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (res.status === 401 && attempt === 0) {
        // Revoked or expired early: one fresh token, then the answer stands.
        this.token = undefined;
        continue;
      }
      if (res.status === 408 || res.status === 429 || res.status >= 500) {
        // Up to the resource name only: the message names the endpoint, not one batch.
        throw new RailUnavailableError(`paypal ${method} ${path.split('/').slice(0, 4).join('/')} answered ${res.status}`);
      }
      return { status: res.status, body: await readJson(res) };
    }
  }

  /** OAuth2 client-credentials token, cached until shortly before it expires; one request at a time. */
  private async accessToken(): Promise<string> {
    if (this.token && this.token.expiresAt > this.now()) return this.token.value;
    this.tokenRequest ??= this.requestToken().finally(() => {
      this.tokenRequest = undefined;
    });
    return this.tokenRequest;
  }

  private async requestToken(): Promise<string> {
    const { clientId, clientSecret } = await this.loadCredentials();
    const res = await this.fetch('/v1/oauth2/token', {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: 'grant_type=client_credentials',
    });
    if (res.status === 401 || res.status === 403) throw new RailConfigError(`paypal refused the client credentials (${res.status})`);
    if (res.status !== 200) throw new RailUnavailableError(`paypal token endpoint answered ${res.status}`);
    const parsed = tokenResponseSchema.safeParse(await readJson(res));
    if (!parsed.success) throw new RailUnavailableError('paypal token endpoint answered an unexpected body');
    const lifetimeMs = parsed.data.expires_in * 1000;
    // A token shorter-lived than twice the margin keeps half its life, rather than none.
    this.token = { value: parsed.data.access_token, expiresAt: this.now() + lifetimeMs - Math.min(TOKEN_MARGIN_MS, lifetimeMs / 2) };
    return this.token.value;
  }

  private async fetch(path: string, init: RequestInit): Promise<Response> {
    // Read on every request, not at construction: local runs reset the configuration between stacks.
    const baseUrl = (this.options.baseUrl ?? config().PAYPAL_BASE_URL)?.replace(/\/+$/, '');
    if (!baseUrl) throw new RailConfigError('PAYPAL_BASE_URL is not set');
    try {
      return await fetch(`${baseUrl}${path}`, { ...init, signal: AbortSignal.timeout(this.requestTimeoutMs) });
    } catch (error) {
      throw new RailUnavailableError(`paypal ${init.method ?? 'GET'} request failed`, { cause: error });
    }
  }

  private loadCredentials(): Promise<PaypalCredentials> {
    // A failed load is not cached: the secret may be fixed while the container lives.
    this.credentials ??= (this.options.credentials ?? defaultCredentials)().catch((error: unknown) => {
      this.credentials = undefined;
      throw error;
    });
    return this.credentials;
  }
}

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text.length === 0) return undefined;
  return safeJson(text);
}

async function defaultCredentials(): Promise<PaypalCredentials> {
  const { PAYPAL_CLIENT_ID, PAYPAL_CLIENT_SECRET, PAYPAL_CREDENTIALS_SECRET_ARN } = config();
  if (PAYPAL_CLIENT_ID && PAYPAL_CLIENT_SECRET) return { clientId: PAYPAL_CLIENT_ID, clientSecret: PAYPAL_CLIENT_SECRET };
  if (PAYPAL_CREDENTIALS_SECRET_ARN) {
    const parsed = paypalCredentialsSchema.safeParse(
      safeJson(await readRailSecret('PAYPAL_CREDENTIALS_SECRET_ARN', PAYPAL_CREDENTIALS_SECRET_ARN)),
    );
    if (!parsed.success) throw new RailConfigError('PAYPAL_CREDENTIALS_SECRET_ARN must hold {"clientId", "clientSecret"}');
    return parsed.data;
  }
  throw new RailConfigError('PayPal credentials are not configured (PAYPAL_CLIENT_ID/SECRET or PAYPAL_CREDENTIALS_SECRET_ARN)');
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
