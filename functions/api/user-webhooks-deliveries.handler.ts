import { listDeliveriesQuerySchema } from '../contracts/request.schemas';
import { validate } from '../contracts/validation';
import { httpHandler } from '../http/handler';
import { authenticateUser } from '../use-cases/auth';
import { listWebhookDeliveries } from '../use-cases/webhooks';

/** GET /api/v1/users/me/webhooks/{id}/deliveries — x-user-key. */
export const handler = httpHandler(async (req) => {
  const owner = { kind: 'user' as const, id: (await authenticateUser(req)).userId };
  return listWebhookDeliveries(owner, req.params.id, validate(listDeliveriesQuerySchema, req.query));
});
