import { loadConfig } from '../config';
import { createWebhookSchema } from '../contracts/request.schemas';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { optionalIdempotencyKey } from '../use-cases/idempotency';
import { createWebhook } from '../use-cases/webhooks';

// Refuses to start without a way to seal signing secrets and stored answers (KMS on AWS, local keys otherwise).
loadConfig({ require: NEEDS.agentWebhooksCreate });

/** POST /api/v1/agents/webhooks {url, events?} — x-agent-key, an optional Idempotency-Key. */
export const handler = httpHandler(async (req) => {
  const { agent } = await authenticate(req, AUTH_MESSAGES.webhooks, false);
  const owner = { kind: 'agent' as const, id: agent.id };
  const idempotencyKey = optionalIdempotencyKey(req);
  return createWebhook(owner, parseJsonBody(req, createWebhookSchema), agent.keyHash, { idempotencyKey });
});
