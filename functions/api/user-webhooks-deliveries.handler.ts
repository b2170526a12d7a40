import { loadConfig } from '../config';
import { listDeliveriesQuerySchema } from '../contracts/request.schemas';
import { validate } from '../contracts/validation';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { listWebhookDeliveries } from '../use-cases/webhooks';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.userWebhooksDeliveries });

/** GET /api/v1/users/me/webhooks/{id}/deliveries — x-user-key. */
export const handler = httpHandler(async (req) => {
  const owner = { kind: 'user' as const, id: (await authenticateUser(req)).userId };
  return listWebhookDeliveries(owner, req.params.id, validate(listDeliveriesQuerySchema, req.query));
});
