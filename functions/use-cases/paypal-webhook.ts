/**
 * POST /api/v1/paypal/webhooks: PayPal tells us an order was approved. The body is believed only
 * after PayPal's own verify-webhook-signature call says SUCCESS for our webhook id, and even then
 * only the order id is taken from it: what to credit is read from PayPal (`settlePaypalTopup`
 * reads the order, captures with PayPal-Request-Id = the top-up, credits once per capture id).
 * So a forged webhook is refused (400) and changes nothing, and a replayed genuine one finds the
 * top-up completed and changes nothing either.
 */
import { config } from '../config';
import { ValidationError } from '../core/errors';
import { isJsonContentType } from '../http/body';
import type { HttpRequest } from '../http/request';
import type { HttpResult } from '../http/response';
import { logger } from '../observability/logger';
import { RailAmbiguousAnswerError, RailConfigError, RailUnavailableError } from '../rails/errors';
import { readRailSecret } from '../rails/rail-secret';
import { findTopupBy } from '../store/topup.repository';
import { paypalOrders, recordLateCapture, settlePaypalTopup } from './topup-credit';
import { REVERSAL_EVENTS, reversePaypalCapture } from './topup-reversal';
import { PaymentProviderUnavailableError } from './topups';

export const INVALID_WEBHOOK = 'invalid webhook signature';
/** The events that mean "this order may be capturable now". */
const ORDER_EVENTS = new Set(['CHECKOUT.ORDER.APPROVED', 'CHECKOUT.ORDER.COMPLETED', 'PAYMENT.CAPTURE.COMPLETED']);

export async function receivePaypalWebhook(req: HttpRequest): Promise<HttpResult> {
  if (!isJsonContentType(req.headers['content-type'])) throw new ValidationError('invalid json body');
  const text = req.body ?? '';
  if (Buffer.byteLength(text, 'utf8') > config().MAX_BODY_BYTES) throw new ValidationError('invalid json body');
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    throw new ValidationError('invalid json body');
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) throw new ValidationError('invalid json body');
  const h = req.headers;
  const transmission = {
    authAlgo: h['paypal-auth-algo'],
    certUrl: h['paypal-cert-url'],
    transmissionId: h['paypal-transmission-id'],
    transmissionSig: h['paypal-transmission-sig'],
    transmissionTime: h['paypal-transmission-time'],
  };
  if (Object.values(transmission).some((v) => !v)) throw new ValidationError(INVALID_WEBHOOK);
  try {
    const verified = await paypalOrders().verifyWebhook(
      transmission as Record<keyof typeof transmission, string>,
      await webhookId(),
      event,
    );
    if (!verified) {
      logger().warn('paypal webhook refused: signature not verified', { transmissionId: transmission.transmissionId });
      throw new ValidationError(INVALID_WEBHOOK);
    }
    const { event_type: type, resource } = event as { event_type?: unknown; resource?: Record<string, unknown> };
    // Issue 19: money taken back from a credited top-up (use-cases/topup-reversal.ts).
    if (typeof type === 'string' && REVERSAL_EVENTS.has(type)) await reversePaypalCapture(type, resource);
    const orderId = typeof type === 'string' && ORDER_EVENTS.has(type) ? orderIdOf(type, resource) : undefined;
    if (orderId) {
      const topup = await findTopupBy({ orderId });
      if (topup?.currency === 'USD' && topup.status === 'PENDING') await settlePaypalTopup(topup);
      // Issue 19: a capture completing after its top-up FAILED for waiting too long is recorded for an operator.
      if (topup?.currency === 'USD' && topup.status === 'FAILED') await recordLateCapture(topup);
    }
    return { statusCode: 200, body: { received: true } };
  } catch (error) {
    // PayPal retries a webhook that did not get a 2xx: a transient failure must say so.
    if (error instanceof RailUnavailableError || error instanceof RailAmbiguousAnswerError || error instanceof RailConfigError) {
      throw new PaymentProviderUnavailableError(error);
    }
    throw error;
  }
}

function orderIdOf(type: string, resource: Record<string, unknown> | undefined): string | undefined {
  if (!resource) return undefined;
  if (type.startsWith('CHECKOUT.ORDER.')) return typeof resource.id === 'string' ? resource.id : undefined;
  // A capture event names its order in supplementary_data.related_ids.order_id.
  const related = (resource.supplementary_data as { related_ids?: { order_id?: unknown } } | undefined)?.related_ids;
  return typeof related?.order_id === 'string' ? related.order_id : undefined;
}

let cachedWebhookId: Promise<string> | undefined;
async function webhookId(): Promise<string> {
  const { PAYPAL_WEBHOOK_ID, PAYPAL_WEBHOOK_ID_SECRET_ARN } = config();
  if (PAYPAL_WEBHOOK_ID) return PAYPAL_WEBHOOK_ID;
  if (!PAYPAL_WEBHOOK_ID_SECRET_ARN) throw new RailConfigError('PAYPAL_WEBHOOK_ID is not configured');
  cachedWebhookId ??= readRailSecret('PAYPAL_WEBHOOK_ID_SECRET_ARN', PAYPAL_WEBHOOK_ID_SECRET_ARN)
    .then((v) => v.trim())
    .catch((error: unknown) => {
      cachedWebhookId = undefined;
      throw error;
    });
  return cachedWebhookId;
}
