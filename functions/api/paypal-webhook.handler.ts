import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { receivePaypalWebhook } from '../use-cases/topups/paypal-webhook';

// Refuses to start (fails the init) without PayPal's settings and the webhook id it verifies with.
loadConfig({ require: NEEDS.paypalWebhook });

/**
 * POST /api/v1/paypal/webhooks — public; PayPal's verify-webhook-signature is its authentication.
 * Not an operation (functions/operations/README.md): it reads the raw body and the paypal-*
 * headers itself. Handled or received before, PayPal gets the same 200: any 2xx stops its retries.
 */
export const handler = httpHandler(async (req) => {
  await receivePaypalWebhook(req);
  return { statusCode: 200, body: { received: true } };
});
