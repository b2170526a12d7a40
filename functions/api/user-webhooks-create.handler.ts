import { loadConfig } from '../config';
import { createWebhookSchema } from '../contracts/request.schemas';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { createWebhook } from '../use-cases/webhooks';

// Refuses to start without a way to seal signing secrets (KMS on AWS, a local key otherwise).
loadConfig({ require: NEEDS.userWebhooksCreate });

/** POST /api/v1/users/me/webhooks {url, events?} — x-user-key. */
export const handler = httpHandler(async (req) => {
  const { userId, userKeyHash } = await authenticateUser(req);
  return createWebhook({ kind: 'user', id: userId }, parseJsonBody(req, createWebhookSchema), userKeyHash);
});
