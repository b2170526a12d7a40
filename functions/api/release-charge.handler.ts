import { loadConfig } from '../config';
import { releaseChargeSchema } from '../contracts/request.schemas';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { requireIdempotencyKey } from '../use-cases/idempotency';
import { releaseCharge } from '../use-cases/lifecycle';
import { parseOptionalJsonBody } from './optional-body';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.releaseCharge });

/** POST /api/v1/agents/charge/{id}/release — x-agent-key, Idempotency-Key, no body (or `{}`). */
export const handler = httpHandler(async (req) => {
  const { agent } = await authenticate(req, AUTH_MESSAGES.lifecycle, false);
  const idempotencyKey = requireIdempotencyKey(req);
  parseOptionalJsonBody(req, releaseChargeSchema);
  return releaseCharge({ agent, chargeId: req.params.id, idempotencyKey });
});
