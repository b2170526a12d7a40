/**
 * POST /api/v1/paypal/webhooks: PayPal tells us an order was approved. Cheap checks first, in
 * this order, each a 400 that changes nothing and costs PayPal no call: a JSON body, the five
 * transmission headers, the certificate URL on PayPal's hosts, a transmission time within 5
 * minutes (rails/paypal.webhook-headers.ts); a transmission id received before (a conditional put
 * of a TTL'd item) is acknowledged with 200 and nothing done. Only then is PayPal's own verify-webhook-signature asked, and
 * the body believed only when it says SUCCESS for our webhook id; even then only the order id is
 * taken from it: what to credit is read from PayPal (`settlePaypalTopup` reads the order,
 * captures with PayPal-Request-Id = the top-up, credits once per capture id). A refused or
 * unhandled webhook gives its transmission id back, so the refusal leaves nothing behind and a
 * retry of the same transmission after a 503 is handled.
 */
import { config } from '../../config';
import { type ApiRequest, isJsonContentType } from '../../contracts/api';
import { isOnRail } from '../../core/money';
import { refuse } from '../../messages/refusal';
import { logger } from '../../observability/logger';
import { serializeError } from '../../observability/serialize-error';
import { RailAmbiguousAnswerError, RailConfigError, RailUnavailableError } from '../../rails/errors';
import { checkTransmissionHeaders } from '../../rails/paypal.webhook-headers';
import { readRailSecret } from '../../rails/rail-secret';
import { claimTransmission, releaseTransmission } from '../../store/topups/paypal-transmission.repository';
import { findTopupBy } from '../../store/topups/topup.repository';
import { paypalOrders, recordLateCapture, settlePaypalTopup } from './topup-credit';
import { REVERSAL_EVENTS, reversePaypalCapture } from './topup-reversal';
import { PaymentProviderUnavailableError } from './topups';

/** The events that mean "this order may be capturable now". */
const ORDER_EVENTS = new Set(['CHECKOUT.ORDER.APPROVED', 'CHECKOUT.ORDER.COMPLETED', 'PAYMENT.CAPTURE.COMPLETED']);

/**
 * What a webhook that passed every check came to: `handled` (acted on where it concerns a top-up),
 * or `receivedBefore` (a transmission id seen already: acknowledged, nothing done). PayPal is
 * answered 200 `{received: true}` for both; every refusal is thrown.
 */
export type PaypalWebhookOutcome = 'handled' | 'receivedBefore';

export async function receivePaypalWebhook(req: ApiRequest): Promise<PaypalWebhookOutcome> {
  if (!isJsonContentType(req.headers['content-type'])) throw refuse('invalidJsonBody');
  const text = req.body ?? '';
  if (Buffer.byteLength(text, 'utf8') > config().MAX_BODY_BYTES) throw refuse('invalidJsonBody');
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    throw refuse('invalidJsonBody');
  }
  if (event === null || typeof event !== 'object' || Array.isArray(event)) throw refuse('invalidJsonBody');
  const checked = checkTransmissionHeaders(req.headers, new Date());
  if ('problem' in checked) throw checked.problem;
  const { transmission } = checked;
  if (!(await claimTransmission(transmission.transmissionId, new Date()))) {
    // Received already (handled, or being handled): acknowledged unasked and unchanged. A 2xx, not
    // a 4xx: PayPal retries every non-2xx for days, and a redelivery of a handled event is no error.
    logger().info('paypal webhook: transmission already received; acknowledged, nothing done', {
      transmissionId: transmission.transmissionId,
    });
    return 'receivedBefore';
  }
  let handled = false;
  try {
    const verified = await paypalOrders().verifyWebhook(transmission, await webhookId(), event);
    if (!verified) {
      logger().warn('paypal webhook refused: signature not verified', { transmissionId: transmission.transmissionId });
      throw refuse('invalidWebhookSignature');
    }
    const { event_type: type, resource } = event as { event_type?: unknown; resource?: Record<string, unknown> };
    // Issue 19: money taken back from a credited top-up (use-cases/topups/topup-reversal.ts).
    if (typeof type === 'string' && REVERSAL_EVENTS.has(type)) await reversePaypalCapture(type, resource);
    const orderId = typeof type === 'string' && ORDER_EVENTS.has(type) ? orderIdOf(type, resource) : undefined;
    if (orderId) {
      const topup = await findTopupBy({ orderId });
      if (isOnRail(topup, 'paypal') && topup.status === 'PENDING') await settlePaypalTopup(topup);
      // Issue 19: a capture completing after its top-up FAILED for waiting too long is recorded for an operator.
      if (isOnRail(topup, 'paypal') && topup.status === 'FAILED') await recordLateCapture(topup);
    }
    handled = true;
    return 'handled';
  } catch (error) {
    // PayPal retries a webhook that did not get a 2xx: a transient failure must say so.
    if (error instanceof RailUnavailableError || error instanceof RailAmbiguousAnswerError || error instanceof RailConfigError) {
      throw new PaymentProviderUnavailableError(error);
    }
    throw error;
  } finally {
    // Refused or not handled: the transmission leaves no trace (and could be handled if it came again).
    if (!handled) {
      await releaseTransmission(transmission.transmissionId).catch((error: unknown) =>
        logger().warn('paypal webhook: could not forget a refused transmission id', {
          transmissionId: transmission.transmissionId,
          error: serializeError(error),
        }),
      );
    }
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
