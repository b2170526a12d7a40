/**
 * PayPal Orders v2 (intent CAPTURE) and webhook verification, as top-ups need them: create an
 * order, read it, capture it (idempotent through `PayPal-Request-Id`), and PayPal's
 * `POST /v1/notifications/verify-webhook-signature`. Answers are zod-checked (`loose`: PayPal adds
 * fields). Transient failures throw RailUnavailableError (PaypalClient); a decided refusal comes
 * back as a value the caller acts on.
 */
import * as z from 'zod';
import { isCurrencyOn, type Minor, parseAmount } from '../core/money';
import { RailAmbiguousAnswerError } from './errors';
import { PaypalClient } from './paypal.client';

const moneySchema = z.object({ currency_code: z.string(), value: z.string() }).loose();
const captureSchema = z.object({ id: z.string(), status: z.string(), amount: moneySchema.optional() }).loose();
const orderSchema = z
  .object({
    id: z.string(),
    status: z.string(),
    links: z.array(z.object({ href: z.string(), rel: z.string() }).loose()).optional(),
    purchase_units: z
      .array(
        z
          .object({
            payments: z
              .object({ captures: z.array(captureSchema).optional() })
              .loose()
              .optional(),
          })
          .loose(),
      )
      .optional(),
  })
  .loose();
export type PaypalOrder = z.infer<typeof orderSchema>;
const errorSchema = z
  .object({ name: z.string().optional(), details: z.array(z.object({ issue: z.string().optional() }).loose()).optional() })
  .loose();
const verifySchema = z.object({ verification_status: z.string() }).loose();
const refundSchema = z
  .object({
    id: z.string(),
    status: z.string(),
    amount: moneySchema.optional(),
    links: z.array(z.object({ href: z.string(), rel: z.string() }).loose()).optional(),
  })
  .loose();

/** Money PayPal took back from a capture: a merchant refund, or a reversal (chargeback). */
export interface CaptureRefund {
  id: string;
  /** COMPLETED: the money is gone from the platform's PayPal balance. */
  status: string;
  /** The capture it was taken from (its `up` link). */
  captureId: string | undefined;
  /** In cents when USD; undefined for another currency. */
  amountMinor: Minor | undefined;
  amount: { currency: string; value: string } | undefined;
}

/** The capture of an order, as far as a top-up cares. */
export interface OrderCapture {
  id: string;
  /** COMPLETED (credit it), PENDING (wait), DECLINED/FAILED (nothing moved). */
  status: string;
  /** The amount in cents when it is USD (undefined for another currency, or no amount). */
  amountMinor: Minor | undefined;
  /** The amount as PayPal wrote it (any currency), for the record an operator reads. */
  amount: { currency: string; value: string } | undefined;
}

/** The webhook headers PayPal signs with; all five are required to verify. */
export interface WebhookTransmission {
  authAlgo: string;
  certUrl: string;
  transmissionId: string;
  transmissionSig: string;
  transmissionTime: string;
}

export class PaypalOrders {
  constructor(private readonly client: PaypalClient = new PaypalClient()) {}

  /** `POST /v2/checkout/orders`; the top-up id is the request id, so a retried create makes one order. */
  async create(input: {
    topupId: string;
    amount: Minor;
    returnUrl?: string;
    cancelUrl?: string;
  }): Promise<{ orderId: string; approveUrl: string }> {
    const res = await this.client.call(
      'POST',
      '/v2/checkout/orders',
      {
        intent: 'CAPTURE',
        purchase_units: [
          {
            reference_id: input.topupId,
            custom_id: input.topupId,
            description: 'Balance top-up',
            amount: { currency_code: 'USD', value: cents(input.amount) },
          },
        ],
        ...(input.returnUrl
          ? {
              payment_source: {
                paypal: {
                  experience_context: {
                    return_url: input.returnUrl,
                    cancel_url: input.cancelUrl ?? input.returnUrl,
                    user_action: 'PAY_NOW',
                    shipping_preference: 'NO_SHIPPING',
                  },
                },
              },
            }
          : {}),
      },
      { 'paypal-request-id': `topup-${input.topupId}`, prefer: 'return=representation' },
    );
    const order = orderSchema.safeParse(res.body);
    if ((res.status !== 200 && res.status !== 201) || !order.success) {
      throw new RailAmbiguousAnswerError(`paypal create order answered ${res.status}`);
    }
    const approve = order.data.links?.find((l) => l.rel === 'payer-action' || l.rel === 'approve');
    if (!approve) throw new RailAmbiguousAnswerError('paypal create order answered no approve link');
    return { orderId: order.data.id, approveUrl: approve.href };
  }

  /** `GET /v2/checkout/orders/{id}`; undefined when PayPal does not know it. */
  async get(orderId: string): Promise<PaypalOrder | undefined> {
    const res = await this.client.call('GET', `/v2/checkout/orders/${encodeURIComponent(orderId)}`);
    if (res.status === 404) return undefined;
    const order = orderSchema.safeParse(res.body);
    if (res.status !== 200 || !order.success) throw new RailAmbiguousAnswerError(`paypal get order answered ${res.status}`);
    return order.data;
  }

  /**
   * `POST /v2/checkout/orders/{id}/capture` with `PayPal-Request-Id` = the top-up id, so a retry
   * (a crash after PayPal captured, a webhook racing a poll) gets the same capture back instead of
   * a second one. `ORDER_ALREADY_CAPTURED` (another request id got there first) reads the order.
   * Returns the capture, or `{ refused: issue }` for an order that cannot be captured (not approved, voided).
   */
  async capture(orderId: string, topupId: string): Promise<OrderCapture | { refused: string }> {
    const path = `/v2/checkout/orders/${encodeURIComponent(orderId)}/capture`;
    const res = await this.client.call('POST', path, {}, { 'paypal-request-id': `capture-${topupId}`, prefer: 'return=representation' });
    if (res.status === 200 || res.status === 201) {
      const order = orderSchema.safeParse(res.body);
      const capture = order.success ? captureOf(order.data) : undefined;
      if (!capture) throw new RailAmbiguousAnswerError('paypal capture answered no capture');
      return capture;
    }
    const error = errorSchema.safeParse(res.body);
    const issue = error.success ? (error.data.details?.[0]?.issue ?? error.data.name ?? 'UNKNOWN') : 'UNKNOWN';
    if (issue === 'ORDER_ALREADY_CAPTURED') {
      const order = await this.get(orderId);
      const capture = order ? captureOf(order) : undefined;
      if (capture) return capture;
    }
    if (res.status === 422 || res.status === 404) return { refused: issue };
    throw new RailAmbiguousAnswerError(`paypal capture answered ${res.status} ${issue}`);
  }

  /**
   * `GET /v2/payments/refunds/{id}`: a refund or a reversal as PayPal has it (what a
   * PAYMENT.CAPTURE.REFUNDED / REVERSED webhook names is believed only from here); undefined
   * when PayPal does not know it.
   */
  async getRefund(refundId: string): Promise<CaptureRefund | undefined> {
    const res = await this.client.call('GET', `/v2/payments/refunds/${encodeURIComponent(refundId)}`);
    if (res.status === 404) return undefined;
    const refund = refundSchema.safeParse(res.body);
    if (res.status !== 200 || !refund.success) throw new RailAmbiguousAnswerError(`paypal get refund answered ${res.status}`);
    const up = refund.data.links?.find((l) => l.rel === 'up')?.href;
    const captureId = up ? /\/v2\/payments\/captures\/([^/?#]+)/.exec(up)?.[1] : undefined;
    const amount = refund.data.amount;
    return {
      id: refund.data.id,
      status: refund.data.status,
      captureId: captureId ? decodeURIComponent(captureId) : undefined,
      amountMinor: amount && isCurrencyOn(amount.currency_code, 'paypal') ? usdMinor(amount.value) : undefined,
      amount: amount ? { currency: amount.currency_code, value: amount.value } : undefined,
    };
  }

  /** PayPal's verify-webhook-signature: true only for `SUCCESS`. `event` is the body as received. */
  async verifyWebhook(t: WebhookTransmission, webhookId: string, event: unknown): Promise<boolean> {
    const res = await this.client.call('POST', '/v1/notifications/verify-webhook-signature', {
      auth_algo: t.authAlgo,
      cert_url: t.certUrl,
      transmission_id: t.transmissionId,
      transmission_sig: t.transmissionSig,
      transmission_time: t.transmissionTime,
      webhook_id: webhookId,
      webhook_event: event,
    });
    const parsed = verifySchema.safeParse(res.body);
    return res.status === 200 && parsed.success && parsed.data.verification_status === 'SUCCESS';
  }
}

/** The order's (first) capture, with its amount in cents when it is USD. */
export function captureOf(order: PaypalOrder): OrderCapture | undefined {
  const capture = order.purchase_units?.[0]?.payments?.captures?.[0];
  if (!capture) return undefined;
  const amountMinor = capture.amount && isCurrencyOn(capture.amount.currency_code, 'paypal') ? usdMinor(capture.amount.value) : undefined;
  const amount = capture.amount ? { currency: capture.amount.currency_code, value: capture.amount.value } : undefined;
  return { id: capture.id, status: capture.status, amountMinor, amount };
}

/** PayPal's USD amount string → cents; undefined when it is not one. */
function usdMinor(value: string): Minor | undefined {
  try {
    return parseAmount(value, 'USD', Number.MAX_SAFE_INTEGER);
  } catch {
    return undefined;
  }
}

/** Cents → PayPal's amount string, always two decimals ("25.50"). */
function cents(minor: Minor): string {
  return `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;
}
