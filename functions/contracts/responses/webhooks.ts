/**
 * The response bodies of webhook endpoints, their deliveries and events (docs/webhooks.md),
 * registered as components (contracts/response.schemas.ts has the registry and the atoms).
 */
import * as z from 'zod';
import { component, timestamp } from '../response.schemas';

const webhookId = z
  .string()
  .regex(/^wh_[0-9a-z]{26}$/)
  .meta({ description: 'Webhook endpoint id: "wh_" + a lower-case ULID.', examples: ['wh_01jhx3k6v1f8q2n7c9m4p5r6s7'] });
const eventId = z
  .string()
  .regex(/^evt_[0-9a-z]{26}$/)
  .meta({
    description: 'Event id: "evt_" + a lower-case ULID; the `webhook-id` header of every delivery of it.',
    examples: ['evt_01jhx3k6v1f8q2n7c9m4p5r6s7'],
  });
const webhookFields = {
  id: webhookId,
  url: z.string().meta({ description: 'Where events are POSTed.' }),
  events: z.array(z.string()).meta({ description: 'The event types this endpoint receives.' }),
  createdAt: timestamp,
};
export const webhookBody = component('Webhook', z.strictObject(webhookFields));
export const createdWebhookBody = component(
  'CreatedWebhook',
  z.strictObject({
    ...webhookFields,
    secret: z
      .string()
      .regex(/^whsec_/)
      .meta({
        description: 'The signing secret (Standard Webhooks: `whsec_` + base64). Shown once; store it to verify deliveries.',
      }),
  }),
);
export const webhookListBody = component('WebhookList', z.strictObject({ webhooks: z.array(webhookBody) }));
export const webhookDeliveryBody = component(
  'WebhookDelivery',
  z.strictObject({
    id: z.string().meta({ description: 'The attempt id (a lower-case ULID: time order).' }),
    eventId,
    type: z.string().meta({ description: 'The event type.', examples: ['charge.succeeded'] }),
    attempt: z.number().int().min(1).meta({ description: 'Which attempt at this event this was (1 = first).' }),
    status: z.enum(['succeeded', 'failed', 'dead']).meta({
      description:
        'succeeded: a 2xx within 5 s. failed: another attempt is scheduled (nextAttemptAt); `not sent` in error when the endpoint was backed off. dead: the last attempt failed; no more.',
    }),
    statusCode: z.number().int().nullable().meta({ description: "The receiver's HTTP status; null when none (timeout, refused)." }),
    error: z.string().nullable().meta({ description: 'Why the attempt failed; null when it succeeded.' }),
    createdAt: timestamp,
    durationMs: z.number().int().min(0),
    nextAttemptAt: timestamp.nullable().meta({ description: 'When the next attempt is due (status failed); else null.' }),
  }),
);
export const webhookDeliveryListBody = component(
  'WebhookDeliveryList',
  z.strictObject({ deliveries: z.array(webhookDeliveryBody).meta({ description: 'Most recent first.' }) }),
);
export const webhookEventBody = component(
  'WebhookEvent',
  z.strictObject({
    id: eventId,
    type: z.string().meta({ examples: ['ping'] }),
    createdAt: timestamp,
    data: z.record(z.string(), z.unknown()).meta({ type: 'object', description: 'The object the event is about, as the API shows it.' }),
  }),
);
