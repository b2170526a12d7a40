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
 *
 * Orders v2 with an approval page, webhooks and verify-webhook-signature (top-ups) live in
 * paypal-sandbox.orders.ts; there `PayPal-Request-Id` is honoured, as PayPal documents for Orders.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { type LocalRequest, sendJson, startLocalServer } from './local-server';
import { bearerProblem, issueToken, type SandboxClient } from './paypal-sandbox.oauth';
import {
  approvalPage,
  FUNDINGS,
  type Funding,
  payerReturn,
  type SandboxOrder,
  SandboxOrders,
  type SandboxRefund,
  type WebhookDelivery,
} from './paypal-sandbox.orders';
import { createPayout, showBatch, showItem } from './paypal-sandbox.payouts';
import { debugId, injectedFault, internalError, routeNotFound, type SandboxReply } from './paypal-sandbox.replies';
import { type ItemStatus, type SandboxBatch, type SandboxRoute, SandboxState } from './paypal-sandbox.state';

export type { Funding, SandboxOrder, SandboxRefund, WebhookDelivery } from './paypal-sandbox.orders';
export type { ItemStatus, SandboxBatch, SandboxItem, SandboxRoute } from './paypal-sandbox.state';

export interface PaypalSandboxOptions {
  port?: number;
  clientId?: string;
  clientSecret?: string;
  /** `expires_in` of issued tokens (PayPal's are about 9 hours). */
  tokenTtlSeconds?: number;
  /** Keep batches in this file across restarts (npm start); in memory when unset. */
  stateFile?: string;
  /** The id of the (one) webhook subscription; PAYPAL_WEBHOOK_ID of the service. */
  webhookId?: string;
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
  /** Orders v2: the webhook subscription, orders, the payer's actions and the webhooks sent. */
  webhookId: string;
  setWebhookUrl(url: string | undefined): void;
  /** While true, approvals send no webhook (the service must find them by polling). */
  dropWebhooks(drop: boolean): void;
  order(orderId: string): SandboxOrder | undefined;
  approveOrder(orderId: string, funding?: Funding): Promise<SandboxOrder | undefined>;
  /** Settles a PENDING capture and sends PAYMENT.CAPTURE.COMPLETED. */
  completeCapture(orderId: string): Promise<WebhookDelivery | undefined>;
  /**
   * Takes money back from the order's completed capture (default: all that is left) as a refund
   * (PAYMENT.CAPTURE.REFUNDED) or a reversal (PAYMENT.CAPTURE.REVERSED) and sends the event;
   * undefined when the capture has not that much left.
   */
  refundCapture(
    orderId: string,
    opts?: { value?: string; eventType?: SandboxRefund['eventType'] },
  ): Promise<{ refund: SandboxRefund; delivery: WebhookDelivery | undefined } | undefined>;
  /** Announces a refund again, as a new event (a fresh id and signature). */
  resendRefundWebhook(refund: SandboxRefund): Promise<WebhookDelivery | undefined>;
  declineOrder(orderId: string): SandboxOrder | undefined;
  /** Sends an event about the order again (a replay or PayPal's own retry), freshly signed. */
  resendWebhook(orderId: string, eventType?: string): Promise<WebhookDelivery | undefined>;
  webhookDeliveries(): readonly WebhookDelivery[];
  captureRequests(): number;
  /** How many verify-webhook-signature calls arrived. */
  verifyRequests(): number;
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
  const orders = new SandboxOrders(
    opts.webhookId ?? `WH-LOCAL-${randomBytes(6).toString('hex').toUpperCase()}`,
    opts.stateFile ? `${opts.stateFile.replace(/\.json$/, '')}.orders.json` : undefined,
  );
  // The links in answers need the sandbox's own URL, known once it listens; no request comes before.
  let url = '';
  const server = await startLocalServer(
    async (request, res) => {
      if (await payerPage(orders, request, res)) return;
      const answer = route(state, client, url, request, orders);
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
    webhookId: orders.webhookId,
    setWebhookUrl: (webhookUrl) => {
      orders.webhookUrl = webhookUrl;
    },
    dropWebhooks: (drop) => {
      orders.dropWebhooks = drop;
    },
    order: (orderId) => orders.get(orderId),
    approveOrder: (orderId, funding) => orders.approve(orderId, funding),
    completeCapture: (orderId) => orders.completeCapture(orderId),
    refundCapture: (orderId, opts) => orders.refundCapture(orderId, opts),
    resendRefundWebhook: (refund) => orders.sendRefundWebhook(refund),
    declineOrder: (orderId) => orders.decline(orderId),
    resendWebhook: async (orderId, eventType = 'CHECKOUT.ORDER.APPROVED') => {
      const order = orders.get(orderId);
      return order ? orders.sendWebhook(order, eventType) : undefined;
    },
    webhookDeliveries: () => orders.deliveries,
    captureRequests: () => orders.captureRequests,
    verifyRequests: () => orders.verifyRequests,
    stop: () => server.stop(),
  };
}

/** Which route serves a request, after the bearer check and any injected fault. */
function route(
  state: SandboxState,
  client: SandboxClient,
  url: string,
  { method, url: requestUrl, body, raw }: LocalRequest,
  orders: SandboxOrders,
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
  const requestId = typeof raw.headers['paypal-request-id'] === 'string' ? raw.headers['paypal-request-id'] : undefined;
  if (method === 'POST' && path === '/v2/checkout/orders') return orders.create(body, requestId, url);
  const orderPath = /^\/v2\/checkout\/orders\/([^/]+)(\/capture)?$/.exec(path);
  if (orderPath?.[1]) {
    const orderId = decodeURIComponent(orderPath[1]);
    if (method === 'GET' && !orderPath[2]) return orders.show(orderId, url);
    if (method === 'POST' && orderPath[2]) return faulted(state, 'capture') ?? orders.captureOrder(orderId, requestId, url);
  }
  const refundId = /^\/v2\/payments\/refunds\/([^/]+)$/.exec(path)?.[1];
  if (method === 'GET' && refundId) return faulted(state, 'get-refund') ?? orders.showRefund(decodeURIComponent(refundId), url);
  if (method === 'POST' && path === '/v1/notifications/verify-webhook-signature') return orders.verify(body);
  const itemId = /^\/v1\/payments\/payouts-item\/([^/]+)$/.exec(path)?.[1];
  if (method === 'GET' && itemId) return faulted(state, 'get-item') ?? showItem(state, decodeURIComponent(itemId), url);
  return routeNotFound();
}

function faulted(state: SandboxState, route: SandboxRoute): SandboxReply {
  const status = state.takeFault(route);
  return status === undefined ? undefined : injectedFault(status);
}

/** The payer's side (no bearer token): the approval page and what its buttons post. */
async function payerPage(orders: SandboxOrders, { method, url, body }: LocalRequest, res: ServerResponse): Promise<boolean> {
  // The forms post here, and a post may then be sent on to the order's return or cancel URL: a
  // browser applies form-action to that redirect too, so their origins are allowed (as PayPal's page lets the payer go back).
  const html = (status: number, text: string, order?: SandboxOrder) => {
    const back = [order?.returnUrl, order?.cancelUrl].flatMap((u) => (u && URL.canParse(u) ? [new URL(u).origin] : []));
    res.writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': `default-src 'none'; form-action 'self'${[...new Set(back)].map((o) => ` ${o}`).join('')}`,
    });
    res.end(text);
  };
  if (method === 'GET' && url.pathname === '/checkoutnow') {
    const order = orders.get(url.searchParams.get('token') ?? '');
    const page = approvalPage(order);
    html(page.status, page.html, order);
    return true;
  }
  const action = /^\/checkoutnow\/([^/]+)\/(approve|decline)$/.exec(url.pathname);
  if (method !== 'POST' || !action?.[1]) return false;
  const orderId = decodeURIComponent(action[1]);
  const approve = action[2] === 'approve';
  const order = approve ? await orders.approve(orderId, fundingOf(new URLSearchParams(body).get('funding'))) : orders.decline(orderId);
  // As PayPal: back to the merchant's return_url (token and PayerID) or cancel_url (token), when the order named them.
  const back = payerReturn(order, approve ? 'approve' : 'decline');
  if (back) {
    res.writeHead(303, { location: back });
    res.end();
    return true;
  }
  const page = approvalPage(order);
  html(page.status, page.html);
  return true;
}

function fundingOf(value: string | null): Funding {
  return FUNDINGS.find((f) => f === value) ?? 'ok';
}
