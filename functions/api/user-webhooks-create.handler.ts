import { loadConfig } from '../config';
import { createWebhookSchema } from '../contracts/request.schemas';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { optionalIdempotencyKey } from '../use-cases/idempotency';
import { createWebhook } from '../use-cases/webhooks';

// Refuses to start without a way to seal signing secrets and stored answers (KMS on AWS, local keys otherwise).
loadConfig({ require: NEEDS.userWebhooksCreate });

/** POST /api/v1/users/me/webhooks {url, events?} — x-user-key, an optional Idempotency-Key. */
export const handler = httpHandler(async (req) => {
  const { userId, userKeyHash } = await authenticateUser(req);
  const idempotencyKey = optionalIdempotencyKey(req);
  return createWebhook({ kind: 'user', id: userId }, parseJsonBody(req, createWebhookSchema), userKeyHash, { idempotencyKey });
});
