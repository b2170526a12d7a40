import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { createCharge } from '../use-cases/charges';
import { requireIdempotencyKey } from '../use-cases/idempotency';
import { createChargeSchema } from './request.schemas';

/** POST /api/v1/agents/charges — x-agent-key, x-user-key, Idempotency-Key. */
export const handler = httpHandler(async (req) => {
  const { agent, userId } = await authenticate(req, AUTH_MESSAGES.createCharge, true);
  const idempotencyKey = requireIdempotencyKey(req);
  const body = parseJsonBody(req, createChargeSchema);
  return createCharge({ agent, userId, idempotencyKey, ...body });
});
