/**
 * The PayPal imitation's OAuth2: client-credentials tokens at `POST /v1/oauth2/token`, and the
 * bearer check every other route starts with.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { JsonReply } from './local-server';
import { reply } from './paypal-sandbox.replies';
import type { SandboxState } from './paypal-sandbox.state';

export interface SandboxClient {
  clientId: string;
  clientSecret: string;
  /** `expires_in` of issued tokens. */
  tokenTtlSeconds: number;
}

/** Issues a token for the right Basic credentials and `grant_type=client_credentials`. */
export function issueToken(state: SandboxState, client: SandboxClient, headers: IncomingHttpHeaders, body: string): JsonReply {
  const [scheme, encoded] = (headers.authorization ?? '').split(' ');
  const [id, secret] = Buffer.from(encoded ?? '', 'base64')
    .toString('utf8')
    .split(':');
  if (scheme !== 'Basic' || id !== client.clientId || secret !== client.clientSecret) {
    return reply(401, { error: 'invalid_client', error_description: 'Client Authentication failed' });
  }
  if (new URLSearchParams(body).get('grant_type') !== 'client_credentials') {
    return reply(400, { error: 'unsupported_grant_type', error_description: 'Grant Type is NULL' });
  }
  const token = `A21AA${randomBytes(32).toString('base64url')}`;
  state.saveToken(token, Date.now() + client.tokenTtlSeconds * 1000);
  return reply(200, {
    scope: 'https://uri.paypal.com/services/payments/payouts',
    access_token: token,
    token_type: 'Bearer',
    app_id: 'APP-LOCAL',
    expires_in: client.tokenTtlSeconds,
    nonce: `${new Date().toISOString()}${randomBytes(8).toString('hex')}`,
  });
}

/** The 401 to answer when the request carries no live bearer token; undefined when it does. */
export function bearerProblem(state: SandboxState, headers: IncomingHttpHeaders): JsonReply | undefined {
  const [scheme, token] = (headers.authorization ?? '').split(' ');
  if (scheme === 'Bearer' && state.tokenValid(token)) return undefined;
  return reply(401, { error: 'invalid_token', error_description: 'Token signature verification failed' });
}
