import { refundChargeSchema } from '../contracts/request.schemas';
import { httpHandler } from '../http/handler';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { requireIdempotencyKey } from '../use-cases/idempotency';
import { refundCharge } from '../use-cases/lifecycle';
import { parseOptionalJsonBody } from './optional-body';

/** POST /api/v1/agents/charge/{id}/refund — x-agent-key, Idempotency-Key, `{amount?}`. */
export const handler = httpHandler(async (req) => {
  const { agent } = await authenticate(req, AUTH_MESSAGES.lifecycle, false);
  const idempotencyKey = requireIdempotencyKey(req);
  const body = parseOptionalJsonBody(req, refundChargeSchema);
  return refundCharge({ agent, chargeId: req.params.id, idempotencyKey, ...body });
});
