import { loadConfig } from '../config';
import { createChargeSchema } from '../contracts/request.schemas';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import { publicBaseUrl } from '../http/request';
import * as NEEDS from '../registry/needs.generated';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { createCharge } from '../use-cases/charges';
import { requireIdempotencyKey } from '../use-cases/idempotency';

// Charges above a payer's approval threshold hand out approval links (on PUBLIC_BASE_URL).
loadConfig({ require: NEEDS.createCharge });

/** POST /api/v1/agents/charges — x-agent-key, x-user-key (an account key or a grant key), Idempotency-Key. */
export const handler = httpHandler(async (req) => {
  const { agent, userId, userKeyHash, grant } = await authenticate(req, AUTH_MESSAGES.createCharge, true);
  const idempotencyKey = requireIdempotencyKey(req);
  const body = parseJsonBody(req, createChargeSchema);
  const baseUrl = publicBaseUrl();
  return createCharge({ agent, userId, userKeyHash, grant, idempotencyKey, baseUrl, ...body });
});
