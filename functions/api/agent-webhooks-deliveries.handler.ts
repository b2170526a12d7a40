import { listDeliveriesQuerySchema } from '../contracts/request.schemas';
import { validate } from '../contracts/validation';
import { httpHandler } from '../http/handler';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { listWebhookDeliveries } from '../use-cases/webhooks';

/** GET /api/v1/agents/webhooks/{id}/deliveries — x-agent-key. */
export const handler = httpHandler(async (req) => {
  const owner = { kind: 'agent' as const, id: (await authenticate(req, AUTH_MESSAGES.webhooks, false)).agent.id };
  return listWebhookDeliveries(owner, req.params.id, validate(listDeliveriesQuerySchema, req.query));
});
