import { loadConfig } from '../config';
import { refundChargeSchema } from '../contracts/request.schemas';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { requireIdempotencyKey } from '../use-cases/idempotency';
import { refundCharge } from '../use-cases/lifecycle';
import { parseOptionalJsonBody } from './optional-body';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.refundCharge });

/** POST /api/v1/agents/charge/{id}/refund — x-agent-key, Idempotency-Key, `{amount?}`. */
export const handler = httpHandler(async (req) => {
  const { agent } = await authenticate(req, AUTH_MESSAGES.lifecycle, false);
  const idempotencyKey = requireIdempotencyKey(req);
  const body = parseOptionalJsonBody(req, refundChargeSchema);
  return refundCharge({ agent, chargeId: req.params.id, idempotencyKey, ...body });
});
