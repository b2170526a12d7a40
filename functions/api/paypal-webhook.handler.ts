import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { receivePaypalWebhook } from '../use-cases/paypal-webhook';

// Refuses to start (fails the init) without PayPal's settings and the webhook id it verifies with.
loadConfig({ require: NEEDS.paypalWebhook });

/** POST /api/v1/paypal/webhooks — public; PayPal's verify-webhook-signature is its authentication. */
export const handler = httpHandler(receivePaypalWebhook);
