/**
 * Webhook endpoints as operations (docs/webhooks.md, DESIGN §15): register (the signing secret
 * shown once; an optional Idempotency-Key seals that answer for a replay), list, delete, recent
 * deliveries and a test `ping`, for an enabled agent (x-agent-key, /api/v1/agents/webhooks) and for
 * a payer (x-user-key, /api/v1/users/me/webhooks). Each is its route's one definition;
 * functions/api/<route>.handler.ts and the console's Developers page (runFor) derive from them.
 */
import type { ApiResult } from '../contracts/api';
import { createWebhookSchema, listDeliveriesQuerySchema } from '../contracts/request.schemas';
import { deliveryView, renderCreatedWebhook, webhookView } from '../contracts/webhook-outcome';
import type { Agent } from '../core/agents';
import type { DeliveryAttempt, Webhook } from '../core/webhooks';
import { AUTH_MESSAGES } from '../messages/credentials';
import * as NEEDS from '../registry/needs.generated';
import type { TransactEntry } from '../store/transact';
import { requireCurrentAgent } from '../use-cases/auth';
import {
  createWebhook,
  deleteOwnerWebhook,
  listOwnerWebhooks,
  listWebhookDeliveries,
  type QueuedTestEvent,
  sendTestEvent,
} from '../use-cases/events/webhooks';
import { operation } from './operation';

const agentOwner = (agent: Agent) => ({ kind: 'agent' as const, id: agent.id });
const userOwner = (userId: string) => ({ kind: 'user' as const, id: userId });

/** The endpoints as their answer (200). */
const listAnswer = (webhooks: Webhook[]): ApiResult => ({ statusCode: 200, body: { webhooks: webhooks.map(webhookView) } });
/** Deleted: 204, no body. */
const deletedAnswer = (): ApiResult => ({ statusCode: 204, rawBody: '' });
/** The delivery attempts as their answer (200). */
const deliveriesAnswer = (attempts: DeliveryAttempt[]): ApiResult => ({
  statusCode: 200,
  body: { deliveries: attempts.map(deliveryView) },
});
/** The queued `ping` as it will be delivered, byte for byte (202). */
const queuedAnswer = ({ text }: QueuedTestEvent): ApiResult => ({ statusCode: 202, rawBody: text });
/** The creation's one rendering, the one its sealed record keeps (201). */
const createdAnswer = (outcome: Parameters<typeof renderCreatedWebhook>[0]): ApiResult => {
  const { statusCode, body } = renderCreatedWebhook(outcome);
  return { statusCode, body };
};

const AGENT = { kind: 'agent', refusal: AUTH_MESSAGES.webhooks } as const;

/**
 * POST /api/v1/agents/webhooks {url, events?}: x-agent-key, an optional Idempotency-Key. The
 * endpoint is registered under the agent's key, checked in the create's own transaction.
 */
export const agentWebhooksCreateOperation = operation({
  route: 'agent-webhooks-create',
  // A way to seal signing secrets and stored answers (KMS on AWS, local keys otherwise).
  needs: NEEDS.agentWebhooksCreate,
  credentials: AGENT,
  idempotency: 'optional',
  body: { schema: createWebhookSchema },
  run: ({ caller: { agent }, idempotencyKey, body }) => createWebhook(agentOwner(agent), body, agent.keyHash, { idempotencyKey }),
  render: createdAnswer,
});

/** GET /api/v1/agents/webhooks: x-agent-key. */
export const agentWebhooksListOperation = operation({
  route: 'agent-webhooks-list',
  needs: NEEDS.agentWebhooksList,
  credentials: AGENT,
  idempotency: 'none',
  run: ({ caller: { agent } }) => listOwnerWebhooks(agentOwner(agent)),
  render: listAnswer,
});

/** DELETE /api/v1/agents/webhooks/{id}: x-agent-key. */
export const agentWebhooksDeleteOperation = operation({
  route: 'agent-webhooks-delete',
  needs: NEEDS.agentWebhooksDelete,
  credentials: AGENT,
  idempotency: 'none',
  run: async ({ caller: { agent }, params }) => {
    // The auth cache may be 30 s behind a disable or a rotation: the agent item decides.
    await requireCurrentAgent(agent, AUTH_MESSAGES.webhooks);
    return deleteOwnerWebhook(agentOwner(agent), params.id);
  },
  render: deletedAnswer,
});

/** GET /api/v1/agents/webhooks/{id}/deliveries?limit=: x-agent-key. */
export const agentWebhooksDeliveriesOperation = operation({
  route: 'agent-webhooks-deliveries',
  needs: NEEDS.agentWebhooksDeliveries,
  credentials: AGENT,
  idempotency: 'none',
  query: listDeliveriesQuerySchema,
  run: ({ caller: { agent }, params, query }) => listWebhookDeliveries(agentOwner(agent), params.id, query),
  render: deliveriesAnswer,
});

/** POST /api/v1/agents/webhooks/{id}/test: x-agent-key. */
export const agentWebhooksTestOperation = operation({
  route: 'agent-webhooks-test',
  needs: NEEDS.agentWebhooksTest,
  credentials: AGENT,
  idempotency: 'none',
  run: async ({ caller: { agent }, params }) => {
    // The auth cache may be 30 s behind a disable or a rotation: the agent item decides.
    await requireCurrentAgent(agent, AUTH_MESSAGES.webhooks);
    return sendTestEvent(agentOwner(agent), params.id);
  },
  render: queuedAnswer,
});

/**
 * POST /api/v1/users/me/webhooks {url, events?}: x-user-key, an optional Idempotency-Key. The
 * endpoint is registered under the payer's account key, checked in the create's own transaction
 * (a rotated key: 401, never the secret). The console's `Add endpoint` runs it too (runFor).
 */
export const userWebhooksCreateOperation = operation({
  route: 'user-webhooks-create',
  // A way to seal signing secrets and stored answers (KMS on AWS, local keys otherwise).
  needs: NEEDS.userWebhooksCreate,
  credentials: { kind: 'payer' },
  idempotency: 'optional',
  body: { schema: createWebhookSchema },
  run: ({ caller: { userId, userKeyHash }, idempotencyKey, body }) =>
    createWebhook(userOwner(userId), body, userKeyHash, { idempotencyKey }),
  render: createdAnswer,
});

/**
 * The payer's creation with more items in its transaction: the console's `Add endpoint`, whose
 * one-time form record (use-cases/identity/console-forms.ts) joins the endpoint's own write, so a double
 * submit adds one endpoint (and no answer is stored sealed: the form record keeps only the id).
 * The same operation otherwise: its key rule, its schema, its use case.
 */
export const userWebhooksCreateJoining = (also: (webhook: Webhook) => readonly TransactEntry[]) =>
  operation({
    ...userWebhooksCreateOperation,
    run: ({ caller: { userId, userKeyHash }, idempotencyKey, body }) =>
      createWebhook(userOwner(userId), body, userKeyHash, { also, idempotencyKey }),
  });

/** GET /api/v1/users/me/webhooks: x-user-key. */
export const userWebhooksListOperation = operation({
  route: 'user-webhooks-list',
  needs: NEEDS.userWebhooksList,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  run: ({ caller: { userId } }) => listOwnerWebhooks(userOwner(userId)),
  render: listAnswer,
});

/** DELETE /api/v1/users/me/webhooks/{id}: x-user-key (and the console's `Delete`). */
export const userWebhooksDeleteOperation = operation({
  route: 'user-webhooks-delete',
  needs: NEEDS.userWebhooksDelete,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  run: ({ caller: { userId }, params }) => deleteOwnerWebhook(userOwner(userId), params.id),
  render: deletedAnswer,
});

/** GET /api/v1/users/me/webhooks/{id}/deliveries?limit=: x-user-key. */
export const userWebhooksDeliveriesOperation = operation({
  route: 'user-webhooks-deliveries',
  needs: NEEDS.userWebhooksDeliveries,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  query: listDeliveriesQuerySchema,
  run: ({ caller: { userId }, params, query }) => listWebhookDeliveries(userOwner(userId), params.id, query),
  render: deliveriesAnswer,
});

/** POST /api/v1/users/me/webhooks/{id}/test: x-user-key (and the console's `Send test event`). */
export const userWebhooksTestOperation = operation({
  route: 'user-webhooks-test',
  needs: NEEDS.userWebhooksTest,
  credentials: { kind: 'payer' },
  idempotency: 'none',
  run: ({ caller: { userId }, params }) => sendTestEvent(userOwner(userId), params.id),
  render: queuedAnswer,
});
