/**
 * Webhook endpoints in the operation registry (routes.ts assembles the areas): an agent's and a user's,
 * five routes each, whose operations differ only in the owner.
 */
import { createWebhookSchema, listDeliveriesQuerySchema } from '../contracts/request.schemas';
import { createdWebhookBody, webhookDeliveryListBody, webhookEventBody, webhookListBody } from '../contracts/responses/webhooks';
import { AGENT_EVENT_TYPES, USER_EVENT_TYPES } from '../core/events';
import { MAX_WEBHOOKS_PER_OWNER } from '../core/webhooks';
import { refusalText as msg } from '../messages/catalogue';
import { AUTH_MESSAGES } from '../messages/credentials';
import { combine, uses } from '../store/access';
import {
  BODY_ERRORS,
  BUSY,
  errors,
  INVALID_IDEMPOTENCY_KEY,
  invalid,
  OPTIONAL_IDEMPOTENCY_ERRORS,
  type OperationDoc,
  ok,
  UNKNOWN_FIELD,
  USER_401,
} from './doc';
import type { DocumentedRoute } from './spec';
import { AGENT, USER, WEBHOOKS } from './tables';

type WebhookOperation = 'create' | 'list' | 'delete' | 'deliveries' | 'test';

/** What the ten webhook entries' documents share for one kind of owner (agents under /agents/webhooks, users under /users/me/webhooks). */
interface WebhookOwner {
  who: 'agent' | 'user';
  security: OperationDoc['security'];
  unauthorized: ReturnType<typeof errors>;
  types: readonly string[];
  notFound: ReturnType<typeof errors>;
  example: { id: string; url: string; events: string[]; createdAt: string };
  idParam: { id: string };
}

function webhookOwner(who: 'agent' | 'user'): WebhookOwner {
  const types = who === 'agent' ? AGENT_EVENT_TYPES : USER_EVENT_TYPES;
  return {
    who,
    security: [[who === 'agent' ? 'agentKey' : 'userKey']],
    unauthorized:
      who === 'agent' ? errors('The agent key is missing or unknown, or the agent is disabled.', [msg(AUTH_MESSAGES.webhooks)]) : USER_401,
    types,
    notFound: errors("No such endpoint, or another owner's.", [msg('webhookNotFound')]),
    example: {
      id: 'wh_01jhx3k6v1f8q2n7c9m4p5r6s7',
      url: 'https://receiver.example.com/hooks/payments',
      events: [types[0]],
      createdAt: '2026-01-15T09:30:00.000Z',
    },
    idParam: { id: 'The webhook endpoint id (`wh_…`).' },
  };
}

/** Registering an endpoint: its secret shown once. */
function createDoc({ who, security, unauthorized, types, example }: WebhookOwner): OperationDoc {
  return {
    summary: `Register a webhook endpoint (${who})`,
    description:
      `Events: ${types.join(', ')}. Deliveries are signed per Standard Webhooks with the returned secret, shown only ` +
      'here. The URL must be https and resolve to public addresses (locally http://127.0.0.1 is allowed). At most 10 endpoints. ' +
      'Send an Idempotency-Key to be able to ask for a lost answer again: the same key and body answer the same endpoint and ' +
      'secret for 24 h, and never register a second one.',
    tag: 'Webhooks',
    security,
    idempotent: 'optional',
    body: {
      name: 'CreateWebhookRequest',
      schema: createWebhookSchema,
      example: { url: 'https://receiver.example.com/hooks/payments', events: [types[0]] },
    },
    responses: {
      201: ok(
        'Registered; store the secret now (a replay of its Idempotency-Key answers it again).',
        createdWebhookBody,
        { ...example, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
        ['Idempotent-Replayed'],
      ),
      400: errors('A bad URL or event type, or a malformed Idempotency-Key.', [
        invalid(createWebhookSchema, {}),
        msg('webhookUrlNotHttps'),
        msg('urlNotPublic'),
        msg('urlHostUnresolved'),
        msg('webhookUrlCredentials'),
        msg('unknownEventType', 'x', who, types),
        UNKNOWN_FIELD(),
        INVALID_IDEMPOTENCY_KEY(),
      ]),
      401: unauthorized,
      409: errors(
        'The owner already has 10 endpoints, or a request with this Idempotency-Key is still in flight.',
        [msg('webhookLimit', MAX_WEBHOOKS_PER_OWNER), msg('idempotencyInProgress')],
        ['Retry-After'],
      ),
      ...BODY_ERRORS,
      422: OPTIONAL_IDEMPOTENCY_ERRORS[422],
      503: BUSY,
    },
  };
}

/** The owner's endpoints. */
function listDoc({ who, security, unauthorized, example }: WebhookOwner): OperationDoc {
  return {
    summary: `List webhook endpoints (${who})`,
    description: 'Never the secrets.',
    tag: 'Webhooks',
    security,
    responses: { 200: ok('The endpoints, oldest first.', webhookListBody, { webhooks: [example] }), 401: unauthorized, 503: BUSY },
  };
}

/** An endpoint deleted. */
function deleteDoc({ who, security, unauthorized, notFound, idParam }: WebhookOwner): OperationDoc {
  return {
    summary: `Delete a webhook endpoint (${who})`,
    description: 'Deliveries still queued for it are dropped.',
    tag: 'Webhooks',
    security,
    pathParams: idParam,
    responses: { 204: { description: 'Deleted.' }, 401: unauthorized, 404: notFound, 503: BUSY },
  };
}

/** An endpoint's recent delivery attempts. */
function deliveriesDoc({ who, security, unauthorized, types, notFound, idParam }: WebhookOwner): OperationDoc {
  return {
    summary: `Recent delivery attempts of an endpoint (${who})`,
    description: 'Every attempt, newest first, kept 30 days: event id and type, status code, error, time; `dead` once retries ran out.',
    tag: 'Webhooks',
    security,
    pathParams: idParam,
    query: listDeliveriesQuerySchema,
    responses: {
      200: ok('Attempts, newest first.', webhookDeliveryListBody, {
        deliveries: [
          {
            id: '01jhx3k6v1f8q2n7c9m4p5r6s7',
            eventId: 'evt_01jhx3k6v1f8q2n7c9m4p5r6s7',
            type: types[0],
            attempt: 1,
            status: 'succeeded',
            statusCode: 200,
            error: null,
            createdAt: '2026-01-15T09:30:00.000Z',
            durationMs: 42,
            nextAttemptAt: null,
          },
        ],
      }),
      400: errors('An invalid query parameter.', [
        invalid(listDeliveriesQuerySchema, { limit: 'x' }),
        invalid(listDeliveriesQuerySchema, { limit: '101' }),
        UNKNOWN_FIELD(),
      ]),
      401: unauthorized,
      404: notFound,
      503: BUSY,
    },
  };
}

/** A test ping queued for one endpoint. */
function testDoc({ who, security, unauthorized, notFound, example, idParam }: WebhookOwner): OperationDoc {
  return {
    summary: `Send a test ping to an endpoint (${who})`,
    description:
      'Queues a `ping` event for this endpoint only; it travels the same signed path as every event but is tried once, ' +
      'never retried: the attempt shows in the deliveries list (`dead` if it failed). At most 5 per endpoint a minute ' +
      '(the minute starts at the first ping).',
    tag: 'Webhooks',
    security,
    pathParams: idParam,
    responses: {
      202: ok('Queued; the event as it will be delivered.', webhookEventBody, {
        id: 'evt_01jhx3k6v1f8q2n7c9m4p5r6s7',
        type: 'ping',
        createdAt: '2026-01-15T09:30:00.000Z',
        data: { webhookId: example.id, url: example.url },
      }),
      401: unauthorized,
      404: notFound,
      429: errors('The endpoint had 5 test pings this minute; nothing was queued.', [msg('tooManyTestEvents')], ['Retry-After']),
      503: BUSY,
    },
  };
}

/** One of the five webhook operations of one kind of owner (agents under /agents/webhooks, users under /users/me/webhooks): the ten entries below differ only in these. */
function webhookOperation(who: 'agent' | 'user', name: WebhookOperation): OperationDoc {
  const owner = webhookOwner(who);
  const operations: Record<WebhookOperation, OperationDoc> = {
    create: createDoc(owner),
    list: listDoc(owner),
    delete: deleteDoc(owner),
    deliveries: deliveriesDoc(owner),
    test: testDoc(owner),
  };
  return operations[name];
}

/** Webhooks (docs/webhooks.md): endpoints of enabled agents and of users. */
export const WEBHOOK_ROUTES = [
  // Webhooks (docs/webhooks.md): endpoints of enabled agents and of users.
  {
    name: 'agent-webhooks-create',
    method: 'POST',
    path: '/api/v1/agents/webhooks',
    table: combine(AGENT, WEBHOOKS.create, uses('idempotentCommand')),
    webhookSecrets: true,
    sealedAnswers: true,
    operation: () => webhookOperation('agent', 'create'),
  },
  {
    name: 'agent-webhooks-list',
    method: 'GET',
    path: '/api/v1/agents/webhooks',
    table: combine(AGENT, WEBHOOKS.list),
    operation: () => webhookOperation('agent', 'list'),
  },
  {
    name: 'agent-webhooks-delete',
    method: 'DELETE',
    path: '/api/v1/agents/webhooks/{id}',
    table: combine(AGENT, WEBHOOKS.delete),
    operation: () => webhookOperation('agent', 'delete'),
  },
  {
    name: 'agent-webhooks-deliveries',
    method: 'GET',
    path: '/api/v1/agents/webhooks/{id}/deliveries',
    table: combine(AGENT, WEBHOOKS.deliveries),
    operation: () => webhookOperation('agent', 'deliveries'),
  },
  {
    name: 'agent-webhooks-test',
    method: 'POST',
    path: '/api/v1/agents/webhooks/{id}/test',
    table: combine(AGENT, WEBHOOKS.test),
    operation: () => webhookOperation('agent', 'test'),
  },
  {
    name: 'user-webhooks-create',
    method: 'POST',
    path: '/api/v1/users/me/webhooks',
    table: combine(USER, uses('createUserWebhook', 'idempotentCommand')),
    webhookSecrets: true,
    sealedAnswers: true,
    operation: () => webhookOperation('user', 'create'),
  },
  {
    name: 'user-webhooks-list',
    method: 'GET',
    path: '/api/v1/users/me/webhooks',
    table: combine(USER, WEBHOOKS.list),
    operation: () => webhookOperation('user', 'list'),
  },
  {
    name: 'user-webhooks-delete',
    method: 'DELETE',
    path: '/api/v1/users/me/webhooks/{id}',
    table: combine(USER, WEBHOOKS.delete),
    operation: () => webhookOperation('user', 'delete'),
  },
  {
    name: 'user-webhooks-deliveries',
    method: 'GET',
    path: '/api/v1/users/me/webhooks/{id}/deliveries',
    table: combine(USER, WEBHOOKS.deliveries),
    operation: () => webhookOperation('user', 'deliveries'),
  },
  {
    name: 'user-webhooks-test',
    method: 'POST',
    path: '/api/v1/users/me/webhooks/{id}/test',
    table: combine(USER, WEBHOOKS.test),
    operation: () => webhookOperation('user', 'test'),
  },
] as const satisfies readonly DocumentedRoute[];
