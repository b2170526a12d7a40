/**
 * A local imitation of the PayPal Payouts API (v1), as documented: OAuth2 client credentials,
 * create batch payout with `sender_batch_id` de-duplication, show batch, show item. It is NOT
 * PayPal's sandbox: no accounts, balances, e-mails, currency conversion or risk checks, and only
 * the fields the payout rail reads are filled with care.
 *
 * What happens to a payout item is chosen by the receiver's e-mail local part (before any `+`):
 *   success (or anything else) → SUCCESS
 *   fail / failed, returned, blocked, refunded, reversed → that final status (FAILED has errors)
 *   unclaimed, onhold, pending → that non-final status (change it with `setItemStatus`)
 *   rejected      → the create answers 400 VALIDATION_ERROR (nothing created)
 *   insufficient  → the create answers 422 INSUFFICIENT_FUNDS (nothing created)
 *   http500       → the create answers 500 (nothing created)
 *   timeout       → the create never answers (nothing created)
 *   lost          → the batch is created (SUCCESS) but the create never answers: the response is lost
 *   nolink        → like lost, and a repeated create is refused as a duplicate without a link to the batch
 * A duplicate `sender_batch_id` is answered as PayPal does: 400 USER_BUSINESS_ERROR, the link to
 * the original batch in `details[0].link`, top-level `links` empty.
 * A PAYPAL_ID receiver always succeeds. Faults on any route: `failNext(route, n, status)`, answered
 * with PayPal's generic error name for the status (RESOURCE_NOT_FOUND, RESOURCE_CONFLICT, …).
 * `PayPal-Request-Id` is ignored, deliberately: the rail must be safe on `sender_batch_id` alone.
 */
import { randomBytes } from 'node:crypto';
import { type LocalRequest, sendJson, startLocalServer } from './local-server';
import { bearerProblem, issueToken, type SandboxClient } from './paypal-sandbox.oauth';
import { createPayout, showBatch, showItem } from './paypal-sandbox.payouts';
import { debugId, injectedFault, internalError, routeNotFound, type SandboxReply } from './paypal-sandbox.replies';
import { type ItemStatus, type SandboxBatch, type SandboxRoute, SandboxState } from './paypal-sandbox.state';

export type { ItemStatus, SandboxBatch, SandboxItem, SandboxRoute } from './paypal-sandbox.state';

export interface PaypalSandboxOptions {
  port?: number;
  clientId?: string;
  clientSecret?: string;
  /** `expires_in` of issued tokens (PayPal's are about 9 hours). */
  tokenTtlSeconds?: number;
  /** Keep batches in this file across restarts (npm start); in memory when unset. */
  stateFile?: string;
}

export interface PaypalSandbox {
  url: string;
  clientId: string;
  clientSecret: string;
  /** How many tokens were issued. */
  tokenRequests(): number;
  /** How many create-payout requests arrived (including rejected duplicates). */
  createRequests(): number;
  batches(): readonly SandboxBatch[];
  batchBySenderId(senderBatchId: string): SandboxBatch | undefined;
  /** Moves every item of a batch to `status` (a recipient claims, PayPal returns, …). */
  setItemStatus(payoutBatchId: string, status: ItemStatus): void;
  /** The next `n` requests to `route` answer `status` (default 503) without doing anything. */
  failNext(route: SandboxRoute, n?: number, status?: number): void;
  /** Invalidates every issued token (the next API call gets 401). */
  revokeTokens(): void;
  stop(): Promise<void>;
}

/** Starts the imitation on a free loopback port (or `opts.port`). */
export async function startPaypalSandbox(opts: PaypalSandboxOptions = {}): Promise<PaypalSandbox> {
  const client: SandboxClient = {
    clientId: opts.clientId ?? `local-client-${randomBytes(6).toString('hex')}`,
    clientSecret: opts.clientSecret ?? randomBytes(24).toString('base64url'),
    tokenTtlSeconds: opts.tokenTtlSeconds ?? 32_400,
  };
  const state = new SandboxState(opts.stateFile);
  // The links in answers need the sandbox's own URL, known once it listens; no request comes before.
  let url = '';
  const server = await startLocalServer(
    (request, res) => {
      const answer = route(state, client, url, request);
      if (answer) sendJson(res, answer.status, answer.body, { 'paypal-debug-id': debugId() });
    },
    { port: opts.port, internalError: () => ({ ...internalError(), headers: { 'paypal-debug-id': debugId() } }) },
  );
  url = server.url;

  return {
    url,
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    tokenRequests: () => state.tokensIssued(),
    createRequests: () => state.createRequests(),
    batches: () => state.batches(),
    batchBySenderId: (senderBatchId) => state.batchBySenderId(senderBatchId),
    setItemStatus: (payoutBatchId, status) => state.setItemStatus(payoutBatchId, status),
    failNext: (route, n = 1, status = 503) => state.failNext(route, n, status),
    revokeTokens: () => state.revokeTokens(),
    stop: () => server.stop(),
  };
}

/** Which route serves a request, after the bearer check and any injected fault. */
function route(
  state: SandboxState,
  client: SandboxClient,
  url: string,
  { method, url: requestUrl, body, raw }: LocalRequest,
): SandboxReply {
  const path = requestUrl.pathname;
  if (method === 'POST' && path === '/v1/oauth2/token') {
    return faulted(state, 'token') ?? issueToken(state, client, raw.headers, body);
  }
  const unauthorized = bearerProblem(state, raw.headers);
  if (unauthorized) return unauthorized;

  if (method === 'POST' && path === '/v1/payments/payouts') {
    const fault = faulted(state, 'create');
    if (fault) return fault;
    state.countCreate();
    return createPayout(state, body, url);
  }
  const batchId = /^\/v1\/payments\/payouts\/([^/]+)$/.exec(path)?.[1];
  if (method === 'GET' && batchId) return faulted(state, 'get-batch') ?? showBatch(state, decodeURIComponent(batchId), url);
  const itemId = /^\/v1\/payments\/payouts-item\/([^/]+)$/.exec(path)?.[1];
  if (method === 'GET' && itemId) return faulted(state, 'get-item') ?? showItem(state, decodeURIComponent(itemId), url);
  return routeNotFound();
}

function faulted(state: SandboxState, route: SandboxRoute): SandboxReply {
  const status = state.takeFault(route);
  return status === undefined ? undefined : injectedFault(status);
}
