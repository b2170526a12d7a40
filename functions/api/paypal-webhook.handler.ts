import { loadConfig, NEEDS_PAYPAL_WEBHOOK } from '../config';
import { httpHandler } from '../http/handler';
import { receivePaypalWebhook } from '../use-cases/paypal-webhook';

// Refuses to start (fails the init) without PayPal's settings and the webhook id it verifies with.
loadConfig({ require: NEEDS_PAYPAL_WEBHOOK });

/** POST /api/v1/paypal/webhooks — public; PayPal's verify-webhook-signature is its authentication. */
export const handler = httpHandler(receivePaypalWebhook);
