/**
 * A webhook endpoint's views and the one rendering of its creation: the answer sent, and stored
 * (sealed: it holds the signing secret) under its Idempotency-Key and replayed byte for byte.
 * Beside the other contracts because both the use case (which stores the answer in the creation's
 * own transaction) and the operations (which render the outcome it returns) read it.
 */
import type { DeliveryAttempt, Webhook } from '../core/webhooks';
import type { Rendered } from './api';

/** A registered endpoint and its signing secret, the one time it is shown. */
export interface CreatedWebhook {
  webhook: Webhook;
  secret: string;
}

/** An endpoint as its owner sees it: never the secret. */
export function webhookView(webhook: Webhook) {
  return { id: webhook.id, url: webhook.url, events: webhook.events, createdAt: webhook.createdAt };
}

export function deliveryView(attempt: DeliveryAttempt) {
  return {
    id: attempt.id,
    eventId: attempt.eventId,
    type: attempt.type,
    attempt: attempt.attempt,
    status: attempt.status,
    statusCode: attempt.statusCode ?? null,
    error: attempt.error ?? null,
    createdAt: attempt.createdAt,
    durationMs: attempt.durationMs,
    nextAttemptAt: attempt.nextAttemptAt ?? null,
  };
}

/** The one rendering of a creation (201, the secret beside the view), sent and stored under its key. */
export const renderCreatedWebhook = ({ webhook, secret }: CreatedWebhook): Rendered => ({
  statusCode: 201,
  body: { ...webhookView(webhook), secret },
});
