/**
 * Webhook endpoints of agents and users (DESIGN §15, docs/webhooks.md): register (the secret is
 * shown once, stored sealed), list, delete, recent deliveries, and a test `ping` that travels the
 * same outbox → dispatcher → queue → delivery path as every event.
 */

import { config } from '../../config';
import type { StoredReply } from '../../contracts/api';
import type { CreateWebhookRequest, ListDeliveriesQuery } from '../../contracts/request.schemas';
import { type CreatedWebhook, renderCreatedWebhook } from '../../contracts/webhook-outcome';
import { AgentDisabledError, UserKeyRevokedError } from '../../core/errors';
import { EVENT_TYPES_BY_OWNER, isEventTypeFor, newEventId, type OutboxEvent, type Owner, ownerKey } from '../../core/events';
import {
  type DeliveryAttempt,
  isWebhookId,
  MAX_WEBHOOKS_PER_OWNER,
  newWebhookId,
  newWebhookSecret,
  TEST_EVENT_WINDOW_SECONDS,
  TEST_EVENTS_PER_WINDOW,
  type Webhook,
} from '../../core/webhooks';
import { Refusal, refuse } from '../../messages/refusal';
import { checkEndpointUrl } from '../../net/address-check';
import { answerSeal } from '../../store/answer-seal';
import { appendOutbox, eventBody } from '../../store/events/outbox';
import {
  getWebhook,
  listWebhooks,
  deleteWebhook as removeWebhook,
  createWebhook as storeWebhook,
  WebhookLimitError,
  type WebhookWriter,
} from '../../store/events/webhook.repository';
import { listDeliveryAttempts } from '../../store/events/webhook-delivery.repository';
import { sealSecret } from '../../store/events/webhook-secret';
import { takeTestEventSlot } from '../../store/events/webhook-test-window.repository';
import type { TransactEntry } from '../../store/transact';
import { AUTH_MESSAGES, forgetAgent, forgetUserKey } from '../auth';
import { creation } from '../idempotency';

export { deliveryView, webhookView } from '../../contracts/webhook-outcome';

const DEFAULT_DELIVERIES = 50;

/**
 * Registers an endpoint: it and its secret, the only time the secret is shown (or, with an
 * Idempotency-Key used before, the stored answer). It is registered
 * under the key the request came with (`keyHash`), checked in the create's own transaction,
 * whatever an auth cache says: a payer's account key, 401 `invalid user key` once it has been
 * rotated away (a rotation deletes every user endpoint: docs/webhooks.md, and nothing the old key
 * registers may outlive it); an agent's key, 401 `invalid or disabled agent key` once the agent is
 * disabled or the key rotated away (a cache may hold either for 30 s, and the endpoint would take a
 * signing secret and the agent's events). The agent route always passes it.
 *
 * With an Idempotency-Key (`idempotencyKey`, optional) a lost answer can be asked for again: the
 * record (scope `<owner id>#webhooks`: another owner's key never finds it) joins the create's
 * transaction and keeps the answer, secret included, sealed for the replay window; the same key
 * with another body → 422. The key check outranks the replay: a rotated or disabled key gets its
 * 401, never the secret.
 */
export async function createWebhook(
  owner: Owner,
  input: CreateWebhookRequest,
  keyHash?: string,
  opts: { also?: (webhook: Webhook) => readonly TransactEntry[]; idempotencyKey?: string | undefined } = {},
): Promise<CreatedWebhook | StoredReply> {
  if (owner.kind === 'user' && keyHash === undefined) throw new Error("a payer's webhook is registered under their account key");
  const events = input.events === undefined ? [...EVENT_TYPES_BY_OWNER[owner.kind]] : [...new Set(input.events)];
  const unknown = events.find((type) => !isEventTypeFor(owner.kind, type));
  if (unknown !== undefined) {
    throw refuse('unknownEventType', unknown.slice(0, 64), owner.kind, EVENT_TYPES_BY_OWNER[owner.kind]);
  }
  return creation(
    {
      scope: `${owner.id}#webhooks`,
      key: opts.idempotencyKey,
      request: { url: input.url, events: JSON.stringify(input.events ?? null) },
      seal: answerSeal,
      render: renderCreatedWebhook,
    },
    async ({ now, record, replayIfUsed }) => {
      let url: URL;
      try {
        url = await checkEndpointUrl(input.url, { allowLoopback: config().WEBHOOK_ALLOW_LOOPBACK });
      } catch (error) {
        // The URL resolved when this key registered it: a replay is the first answer, whatever DNS says now.
        const earlier = await replayIfUsed();
        if (earlier) return earlier;
        throw error;
      }
      const secret = newWebhookSecret();
      const webhook: Webhook = { id: newWebhookId(), owner: ownerKey(owner), url: url.href, events, createdAt: now.toISOString() };
      const sealedSecret = await sealSecret(secret, { owner: webhook.owner, webhookId: webhook.id });
      const writer: WebhookWriter | undefined =
        keyHash === undefined
          ? undefined
          : owner.kind === 'user'
            ? { userId: owner.id, accountKeyHash: keyHash }
            : { agentKeyHash: keyHash };
      const created: CreatedWebhook = { webhook, secret };
      const idempotency = record(created);
      try {
        await storeWebhook({ ...webhook, sealedSecret }, writer, [...(opts.also?.(webhook) ?? []), ...(idempotency ? [idempotency] : [])]);
      } catch (error) {
        if (error instanceof WebhookLimitError) throw refuse('webhookLimit', MAX_WEBHOOKS_PER_OWNER);
        if (error instanceof UserKeyRevokedError && keyHash !== undefined) {
          forgetUserKey(keyHash);
          throw refuse(AUTH_MESSAGES.user);
        }
        if (error instanceof AgentDisabledError && keyHash !== undefined) {
          forgetAgent(keyHash);
          throw refuse(AUTH_MESSAGES.webhooks);
        }
        throw error;
      }
      return created;
    },
  );
}

/** The owner's endpoints. */
export function listOwnerWebhooks(owner: Owner): Promise<Webhook[]> {
  return listWebhooks(ownerKey(owner));
}

/** Deletes one of the owner's endpoints; 404 `webhookNotFound` for any other id. */
export async function deleteOwnerWebhook(owner: Owner, webhookId: string | undefined): Promise<void> {
  if (!isWebhookId(webhookId) || !(await removeWebhook(ownerKey(owner), webhookId))) throw refuse('webhookNotFound');
}

/** The recent delivery attempts to one of the owner's endpoints (404 `webhookNotFound` for any other id). */
export async function listWebhookDeliveries(
  owner: Owner,
  webhookId: string | undefined,
  query: ListDeliveriesQuery,
): Promise<DeliveryAttempt[]> {
  const webhook = await ownWebhook(owner, webhookId);
  return listDeliveryAttempts(webhook.id, query.limit ?? DEFAULT_DELIVERIES);
}

/** A test event queued: the event, and its text exactly as it will be delivered. */
export interface QueuedTestEvent {
  event: OutboxEvent;
  text: string;
}

/**
 * Queues a `ping` to this one endpoint: the event as it will be delivered. At most
 * TEST_EVENTS_PER_WINDOW a window per endpoint (429 with Retry-After beyond, nothing queued).
 */
export async function sendTestEvent(owner: Owner, webhookId: string | undefined): Promise<QueuedTestEvent> {
  const webhook = await ownWebhook(owner, webhookId);
  const now = new Date();
  const wait = await takeTestEventSlot(webhook.id, now, { max: TEST_EVENTS_PER_WINDOW, windowSeconds: TEST_EVENT_WINDOW_SECONDS });
  if (wait !== undefined) throw new Refusal('tooManyTestEvents', [], { retryAfter: wait });
  const event: OutboxEvent = {
    id: newEventId(now),
    type: 'ping',
    createdAt: now.toISOString(),
    owner,
    webhookId: webhook.id,
    data: { webhookId: webhook.id, url: webhook.url },
  };
  await appendOutbox([event], now);
  return { event, text: eventBody(event) };
}

async function ownWebhook(owner: Owner, webhookId: string | undefined) {
  const webhook = isWebhookId(webhookId) ? await getWebhook(ownerKey(owner), webhookId) : undefined;
  if (!webhook) throw refuse('webhookNotFound');
  return webhook;
}
