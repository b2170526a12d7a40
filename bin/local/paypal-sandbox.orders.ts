/**
 * The PayPal imitation's Orders v2 (intent CAPTURE) with an approval page and webhooks, as
 * top-ups use them (docs/topups.md):
 *   POST /v2/checkout/orders                 create (PayPal-Request-Id: the same id → the same order)
 *   GET  /v2/checkout/orders/{id}            show (captures under purchase_units[0].payments)
 *   POST /v2/checkout/orders/{id}/capture    capture an APPROVED order (PayPal-Request-Id: the same id →
 *                                            the same answer; another → 422 ORDER_ALREADY_CAPTURED)
 *   GET  /checkoutnow?token={id}             the payer's approval page (HTML, no JavaScript)
 *   POST /checkoutnow/{id}/approve|decline   what its buttons post; approve sends CHECKOUT.ORDER.APPROVED
 *                                            and, as PayPal does, sends the payer back to the order's
 *                                            return_url with `token=<order id>&PayerID=<payer id>`;
 *                                            Cancel to its cancel_url with `token` (each appended to the
 *                                            URL's own query); without one, the page shows the order
 *   GET  /v2/payments/refunds/{id}           show a refund or reversal (links: `up` to its capture)
 *   POST /v1/notifications/verify-webhook-signature
 * Webhooks are signed with the imitation's own HMAC key, not PayPal's certificate chain; the
 * verify call checks that signature, the webhook id and that the event is byte-for-byte the one
 * sent, so the service's code path (ask PayPal to verify) is the production one. Declining on
 * the page voids the order (at PayPal the order would just stay unapproved until it lapses);
 * approving with `funding=declined` makes the capture come back DECLINED, `funding=pending` PENDING
 * (until `completeCapture`, which sends PAYMENT.CAPTURE.COMPLETED), `funding=other-currency`
 * COMPLETED in EUR (a capture the top-up cannot take). `refundCapture` takes money back from a
 * completed capture — a merchant refund (PAYMENT.CAPTURE.REFUNDED) or a chargeback/reversal
 * (PAYMENT.CAPTURE.REVERSED) — and sends the event, its resource the refund as PayPal shows it.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { formatAmount, parseAmount } from '../../functions/core/money';
import { paypalId, reply, type SandboxReply, validationError } from './paypal-sandbox.replies';

export type OrderStatus = 'CREATED' | 'PAYER_ACTION_REQUIRED' | 'APPROVED' | 'COMPLETED' | 'VOIDED';
export const FUNDINGS = ['ok', 'declined', 'pending', 'other-currency'] as const;
export type Funding = (typeof FUNDINGS)[number];

export interface SandboxOrder {
  id: string;
  status: OrderStatus;
  amount: { currency_code: string; value: string };
  referenceId: string | undefined;
  requestId: string | undefined;
  returnUrl: string | undefined;
  /** Where Cancel sends the payer (experience_context.cancel_url). Absent in files from before it. */
  cancelUrl?: string | undefined;
  /** The payer's PayPal id, given at approval (PayPal's 13 characters): `payer.payer_id`, and PayerID on return. */
  payerId?: string | undefined;
  createdAt: string;
  /** How the capture goes: `declined` fails, `pending` waits, `other-currency` completes in EUR. */
  funding: Funding;
  capture: { id: string; status: string; requestId: string | undefined } | undefined;
}

/** Money taken back from a capture (PayPal's refund resource; a reversal is one too). */
export interface SandboxRefund {
  id: string;
  orderId: string;
  captureId: string;
  status: 'COMPLETED';
  amount: { currency_code: string; value: string };
  /** The event it was announced with. */
  eventType: 'PAYMENT.CAPTURE.REFUNDED' | 'PAYMENT.CAPTURE.REVERSED';
  createdAt: string;
}

export interface WebhookDelivery {
  transmissionId: string;
  eventType: string;
  orderId: string;
  status: number | 'error';
  headers: Record<string, string>;
  body: string;
}

export class SandboxOrders {
  private readonly orders = new Map<string, SandboxOrder>();
  private readonly byRequestId = new Map<string, string>();
  private readonly refunds = new Map<string, SandboxRefund>();
  private readonly signingKey = randomBytes(32);
  readonly deliveries: WebhookDelivery[] = [];
  webhookUrl: string | undefined;
  /** While true, approvals send no webhook (tests of the polling fallback). */
  dropWebhooks = false;
  captureRequests = 0;
  /** How many verify-webhook-signature calls arrived (the service must make none for a webhook its cheap checks refuse). */
  verifyRequests = 0;

  constructor(
    readonly webhookId: string,
    private readonly stateFile?: string,
  ) {
    if (stateFile && existsSync(stateFile)) {
      for (const order of JSON.parse(readFileSync(stateFile, 'utf8')) as SandboxOrder[]) this.index(order);
    }
  }

  get(orderId: string): SandboxOrder | undefined {
    return this.orders.get(orderId);
  }

  all(): SandboxOrder[] {
    return [...this.orders.values()];
  }

  /** `POST /v2/checkout/orders`. */
  create(text: string, requestId: string | undefined, url: string): SandboxReply {
    const again = requestId ? this.byRequestId.get(requestId) : undefined;
    if (again) return reply(200, this.view(this.orders.get(again) as SandboxOrder, url));
    let body: {
      intent?: unknown;
      purchase_units?: { amount?: { currency_code?: unknown; value?: unknown }; reference_id?: unknown }[];
      payment_source?: { paypal?: { experience_context?: { return_url?: unknown; cancel_url?: unknown } } };
    };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      return validationError([{ field: 'body', issue: 'MALFORMED_REQUEST_JSON' }]);
    }
    if (body.intent !== 'CAPTURE' && body.intent !== 'AUTHORIZE')
      return validationError([{ field: '/intent', issue: 'MISSING_REQUIRED_PARAMETER' }]);
    const unit = body.purchase_units?.[0];
    const amount = unit?.amount;
    if (!amount || typeof amount.currency_code !== 'string' || typeof amount.value !== 'string') {
      return validationError([{ field: '/purchase_units/@reference_id==default/amount', issue: 'MISSING_REQUIRED_PARAMETER' }]);
    }
    try {
      parseAmount(amount.value, 'USD', Number.MAX_SAFE_INTEGER);
    } catch {
      return validationError([{ field: '/purchase_units/@reference_id==default/amount/value', issue: 'DECIMAL_PRECISION' }]);
    }
    const context = body.payment_source?.paypal?.experience_context;
    const order: SandboxOrder = {
      id: paypalId(17),
      status: context ? 'PAYER_ACTION_REQUIRED' : 'CREATED',
      amount: { currency_code: amount.currency_code, value: amount.value },
      referenceId: typeof unit?.reference_id === 'string' ? unit.reference_id : undefined,
      requestId,
      returnUrl: typeof context?.return_url === 'string' ? context.return_url : undefined,
      cancelUrl: typeof context?.cancel_url === 'string' ? context.cancel_url : undefined,
      createdAt: new Date().toISOString(),
      funding: 'ok',
      capture: undefined,
    };
    this.index(order);
    this.persist();
    return reply(201, this.view(order, url));
  }

  /** `GET /v2/checkout/orders/{id}`. */
  show(orderId: string, url: string): SandboxReply {
    const order = this.orders.get(orderId);
    return order ? reply(200, this.view(order, url)) : notFoundOrder();
  }

  /** `POST /v2/checkout/orders/{id}/capture`. */
  captureOrder(orderId: string, requestId: string | undefined, url: string): SandboxReply {
    this.captureRequests += 1;
    const order = this.orders.get(orderId);
    if (!order) return notFoundOrder();
    if (order.capture) {
      // The same PayPal-Request-Id is the same request: its answer again.
      if (requestId && order.capture.requestId === requestId) return reply(201, this.view(order, url));
      return unprocessable('ORDER_ALREADY_CAPTURED', 'Order already captured. If intent=CAPTURE only one capture per order is allowed.');
    }
    if (order.status !== 'APPROVED') return unprocessable('ORDER_NOT_APPROVED', 'Payer has not yet approved the Order for payment.');
    const status = order.funding === 'declined' ? 'DECLINED' : order.funding === 'pending' ? 'PENDING' : 'COMPLETED';
    order.capture = { id: paypalId(17), status, requestId };
    order.status = 'COMPLETED';
    this.persist();
    return reply(201, this.view(order, url));
  }

  /** The payer approves on the page; the webhook follows (awaited, so a test sees its effect). */
  async approve(orderId: string, funding: Funding = 'ok'): Promise<SandboxOrder | undefined> {
    const order = this.orders.get(orderId);
    if (!order || (order.status !== 'CREATED' && order.status !== 'PAYER_ACTION_REQUIRED')) return order;
    order.status = 'APPROVED';
    order.funding = funding;
    order.payerId = paypalId(13);
    this.persist();
    if (!this.dropWebhooks) await this.sendWebhook(order, 'CHECKOUT.ORDER.APPROVED');
    return order;
  }

  /** PayPal settles a PENDING capture (a review cleared, an eCheck arrived) and says so. */
  async completeCapture(orderId: string): Promise<WebhookDelivery | undefined> {
    const order = this.orders.get(orderId);
    if (order?.capture?.status !== 'PENDING') return undefined;
    order.capture.status = 'COMPLETED';
    this.persist();
    return this.dropWebhooks ? undefined : this.sendWebhook(order, 'PAYMENT.CAPTURE.COMPLETED');
  }

  /**
   * Takes `value` (default: all that is left) back from the order's completed capture, as a
   * merchant refund or a reversal (chargeback), and sends its event. Refuses (undefined) more than
   * the capture has left, as PayPal does.
   */
  async refundCapture(
    orderId: string,
    opts: { value?: string; eventType?: SandboxRefund['eventType'] } = {},
  ): Promise<{ refund: SandboxRefund; delivery: WebhookDelivery | undefined } | undefined> {
    const order = this.orders.get(orderId);
    if (order?.capture?.status !== 'COMPLETED') return undefined;
    const captured = parseAmount(order.amount.value, 'USD', Number.MAX_SAFE_INTEGER);
    const taken = [...this.refunds.values()]
      .filter((r) => r.orderId === orderId)
      .reduce((sum, r) => sum + parseAmount(r.amount.value, 'USD', Number.MAX_SAFE_INTEGER), 0);
    const value = opts.value ?? formatAmount(captured - taken, 'USD');
    const minor = parseAmount(value, 'USD', Number.MAX_SAFE_INTEGER);
    if (minor <= 0 || taken + minor > captured) return undefined;
    const refund: SandboxRefund = {
      id: paypalId(17),
      orderId,
      captureId: order.capture.id,
      status: 'COMPLETED',
      amount: { currency_code: captureAmount(order).currency_code, value: twoDecimals(minor) },
      eventType: opts.eventType ?? 'PAYMENT.CAPTURE.REFUNDED',
      createdAt: new Date().toISOString(),
    };
    this.refunds.set(refund.id, refund);
    const delivery = this.dropWebhooks ? undefined : await this.sendRefundWebhook(refund);
    return { refund, delivery };
  }

  /** `GET /v2/payments/refunds/{id}`. */
  showRefund(refundId: string, url: string): SandboxReply {
    const refund = this.refunds.get(refundId);
    return refund ? reply(200, this.refundView(refund, url)) : notFoundOrder();
  }

  /** Sends (or re-sends, a new event) the refund's event, signed. */
  sendRefundWebhook(refund: SandboxRefund, url = this.webhookUrl): Promise<WebhookDelivery | undefined> {
    const summary = refund.eventType === 'PAYMENT.CAPTURE.REVERSED' ? 'A payment was reversed' : 'A capture was refunded';
    return this.deliver(refund.orderId, refund.eventType, 'refund', summary, this.refundView(refund, url ?? ''), url);
  }

  private refundView(refund: SandboxRefund, url: string) {
    return {
      id: refund.id,
      status: refund.status,
      amount: refund.amount,
      create_time: refund.createdAt,
      ...(refund.eventType === 'PAYMENT.CAPTURE.REVERSED' ? { note_to_payer: 'Payment reversed' } : {}),
      links: [
        { href: `${url}/v2/payments/refunds/${refund.id}`, rel: 'self', method: 'GET' },
        { href: `${url}/v2/payments/captures/${refund.captureId}`, rel: 'up', method: 'GET' },
      ],
    };
  }

  decline(orderId: string): SandboxOrder | undefined {
    const order = this.orders.get(orderId);
    if (order && (order.status === 'CREATED' || order.status === 'PAYER_ACTION_REQUIRED')) {
      order.status = 'VOIDED';
      this.persist();
    }
    return order;
  }

  /** Sends (or, for tests, re-sends) an event about `order` to the webhook URL, signed. */
  sendWebhook(order: SandboxOrder, eventType: string, url = this.webhookUrl): Promise<WebhookDelivery | undefined> {
    if (eventType.startsWith('PAYMENT.CAPTURE.') && order.capture) {
      const amount = captureAmount(order);
      return this.deliver(
        order.id,
        eventType,
        'capture',
        `Payment ${order.capture.status.toLowerCase()} for ${amount.value} ${amount.currency_code}`,
        {
          id: order.capture.id,
          status: order.capture.status,
          amount,
          final_capture: true,
          supplementary_data: { related_ids: { order_id: order.id } },
        },
        url,
      );
    }
    const summary = `An order has been ${eventType === 'CHECKOUT.ORDER.APPROVED' ? 'approved by buyer' : 'updated'}`;
    return this.deliver(
      order.id,
      eventType,
      'checkout-order',
      summary,
      {
        id: order.id,
        status: order.status,
        intent: 'CAPTURE',
        purchase_units: [{ reference_id: order.referenceId ?? 'default', amount: order.amount }],
      },
      url,
    );
  }

  /** One signed webhook event, as PayPal sends it, to `url`. */
  private async deliver(
    orderId: string,
    eventType: string,
    resourceType: string,
    summary: string,
    resource: unknown,
    url: string | undefined,
  ): Promise<WebhookDelivery | undefined> {
    if (!url) return undefined;
    const event = {
      id: `WH-${paypalId(17)}`,
      event_version: '1.0',
      create_time: new Date().toISOString(),
      resource_type: resourceType,
      resource_version: '2.0',
      event_type: eventType,
      summary,
      resource,
    };
    const body = JSON.stringify(event);
    const transmissionId = randomBytes(16).toString('hex');
    const transmissionTime = new Date().toISOString();
    const headers = {
      'content-type': 'application/json',
      'paypal-auth-algo': 'SHA256withRSA',
      // Where PayPal's sandbox keeps its signing certificates (the service checks the host; nothing fetches it here).
      'paypal-cert-url': `https://api.sandbox.paypal.com/v1/notifications/certs/CERT-360caa42-fca2a594-${randomBytes(4).toString('hex')}`,
      'paypal-transmission-id': transmissionId,
      'paypal-transmission-time': transmissionTime,
      'paypal-transmission-sig': this.sign(transmissionId, transmissionTime, this.webhookId, body),
    };
    let status: number | 'error';
    try {
      const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(30_000) });
      status = res.status;
      await res.text();
    } catch {
      status = 'error';
    }
    const delivery = { transmissionId, eventType, orderId, status, headers, body };
    this.deliveries.push(delivery);
    return delivery;
  }

  /** `POST /v1/notifications/verify-webhook-signature`. */
  verify(text: string): SandboxReply {
    this.verifyRequests += 1;
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return validationError([{ field: 'body', issue: 'MALFORMED_REQUEST_JSON' }]);
    }
    const [id, time, webhookId, sig] = [body.transmission_id, body.transmission_time, body.webhook_id, body.transmission_sig];
    if (
      typeof id !== 'string' ||
      typeof time !== 'string' ||
      typeof webhookId !== 'string' ||
      typeof sig !== 'string' ||
      !body.webhook_event
    ) {
      return validationError([{ field: 'body', issue: 'MISSING_REQUIRED_PARAMETER' }]);
    }
    const expected = Buffer.from(this.sign(id, time, webhookId, JSON.stringify(body.webhook_event)));
    const given = Buffer.from(sig);
    const ok = webhookId === this.webhookId && expected.length === given.length && timingSafeEqual(expected, given);
    return reply(200, { verification_status: ok ? 'SUCCESS' : 'FAILURE' });
  }

  private sign(id: string, time: string, webhookId: string, body: string): string {
    const digest = createHash('sha256').update(body).digest('hex');
    return createHmac('sha256', this.signingKey).update(`${id}|${time}|${webhookId}|${digest}`).digest('base64');
  }

  private view(order: SandboxOrder, url: string) {
    const approvable = order.status === 'CREATED' || order.status === 'PAYER_ACTION_REQUIRED';
    return {
      id: order.id,
      intent: 'CAPTURE',
      status: order.status,
      create_time: order.createdAt,
      ...(order.payerId ? { payer: { payer_id: order.payerId } } : {}),
      purchase_units: [
        {
          reference_id: order.referenceId ?? 'default',
          amount: order.amount,
          ...(order.capture
            ? {
                payments: {
                  captures: [{ id: order.capture.id, status: order.capture.status, amount: captureAmount(order), final_capture: true }],
                },
              }
            : {}),
        },
      ],
      links: [
        { href: `${url}/v2/checkout/orders/${order.id}`, rel: 'self', method: 'GET' },
        ...(approvable
          ? [{ href: `${url}/checkoutnow?token=${order.id}`, rel: order.status === 'CREATED' ? 'approve' : 'payer-action', method: 'GET' }]
          : []),
        ...(order.status === 'APPROVED' ? [{ href: `${url}/v2/checkout/orders/${order.id}/capture`, rel: 'capture', method: 'POST' }] : []),
      ],
    };
  }

  private index(order: SandboxOrder): void {
    this.orders.set(order.id, order);
    if (order.requestId) this.byRequestId.set(order.requestId, order.id);
  }

  private persist(): void {
    if (!this.stateFile) return;
    mkdirSync(dirname(this.stateFile), { recursive: true });
    writeFileSync(`${this.stateFile}.tmp`, JSON.stringify(this.all(), null, 2));
    renameSync(`${this.stateFile}.tmp`, this.stateFile);
  }
}

/** Cents → PayPal's amount string, always two decimals. */
function twoDecimals(minor: number): string {
  return `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;
}

/** What the capture took: the order's amount, in EUR when the payer's funding was `other-currency`. */
function captureAmount(order: SandboxOrder): { currency_code: string; value: string } {
  return order.funding === 'other-currency' ? { currency_code: 'EUR', value: order.amount.value } : order.amount;
}

/** The payer's approval page: the amount and its forms, no script, nothing external. */
export function approvalPage(order: SandboxOrder | undefined): { status: number; html: string } {
  if (!order) return { status: 404, html: page('Order not found', '<p>This checkout link is not valid.</p>') };
  const amount = `${escapeHtml(formatAmount(parseAmount(order.amount.value, 'USD', Number.MAX_SAFE_INTEGER), 'USD'))} ${escapeHtml(order.amount.currency_code)}`;
  if (order.status !== 'CREATED' && order.status !== 'PAYER_ACTION_REQUIRED') {
    return { status: 200, html: page('Checkout', `<p>Order ${escapeHtml(order.id)} for ${amount}: <strong>${order.status}</strong>.</p>`) };
  }
  const action = `/checkoutnow/${encodeURIComponent(order.id)}`;
  return {
    status: 200,
    html: page(
      'Pay with PayPal (local imitation)',
      `<p>Pay <strong>${amount}</strong> to Agent Payment Service.</p>
<form method="post" action="${action}/approve"><input type="hidden" name="funding" value="ok"><button type="submit">Approve</button></form>
<form method="post" action="${action}/approve"><input type="hidden" name="funding" value="declined"><button type="submit">Approve with a card that will be declined</button></form>
<form method="post" action="${action}/approve"><input type="hidden" name="funding" value="pending"><button type="submit">Approve; the capture stays pending</button></form>
<form method="post" action="${action}/approve"><input type="hidden" name="funding" value="other-currency"><button type="submit">Approve; captured in EUR</button></form>
<form method="post" action="${action}/decline"><button type="submit">Cancel</button></form>`,
    ),
  };
}

/** Where the payer's browser goes after a button, as PayPal sends it: undefined when the order names no such URL. */
export function payerReturn(order: SandboxOrder | undefined, action: 'approve' | 'decline'): string | undefined {
  const target = action === 'approve' ? order?.returnUrl : order?.cancelUrl;
  if (!order || !target || !URL.canParse(target)) return undefined;
  const back = new URL(target);
  back.searchParams.set('token', order.id);
  if (action === 'approve' && order.payerId) back.searchParams.set('PayerID', order.payerId);
  return back.toString();
}

/** A phone-sized page: a viewport, a language, and buttons that wrap rather than overflow. */
function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head><body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function notFoundOrder(): SandboxReply {
  return reply(404, {
    name: 'RESOURCE_NOT_FOUND',
    message: 'The specified resource does not exist.',
    details: [{ issue: 'INVALID_RESOURCE_ID' }],
  });
}

function unprocessable(issue: string, description: string): SandboxReply {
  return reply(422, {
    name: 'UNPROCESSABLE_ENTITY',
    message: 'The requested action could not be performed, semantically incorrect, or failed business validation.',
    details: [{ issue, description }],
  });
}
