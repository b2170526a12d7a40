import { releaseChargeSchema } from '../contracts/request.schemas';
import { httpHandler } from '../http/handler';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { requireIdempotencyKey } from '../use-cases/idempotency';
import { releaseCharge } from '../use-cases/lifecycle';
import { parseOptionalJsonBody } from './optional-body';

/** POST /api/v1/agents/charge/{id}/release — x-agent-key, Idempotency-Key, no body (or `{}`). */
export const handler = httpHandler(async (req) => {
  const { agent } = await authenticate(req, AUTH_MESSAGES.lifecycle, false);
  const idempotencyKey = requireIdempotencyKey(req);
  parseOptionalJsonBody(req, releaseChargeSchema);
  return releaseCharge({ agent, chargeId: req.params.id, idempotencyKey });
});
