import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import { routeConfigNeeds } from '../registry/routes';
import { receivePaypalWebhook } from '../use-cases/paypal-webhook';

// Refuses to start (fails the init) without PayPal's settings and the webhook id it verifies with.
loadConfig({ require: routeConfigNeeds('paypal-webhook') });

/** POST /api/v1/paypal/webhooks — public; PayPal's verify-webhook-signature is its authentication. */
export const handler = httpHandler(receivePaypalWebhook);
