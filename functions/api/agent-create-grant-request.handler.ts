import { loadConfig } from '../config';
import { createGrantRequestSchema } from '../contracts/grants';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import { publicBaseUrl } from '../http/request';
import * as NEEDS from '../registry/needs.generated';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { requestGrant } from '../use-cases/grant-requests';
import { requireIdempotencyKey } from '../use-cases/idempotency';

// Hands out consent links (on PUBLIC_BASE_URL), their tokens derived from the approval secret.
loadConfig({ require: NEEDS.agentCreateGrantRequest });

/** POST /api/v1/agents/grant-requests — x-agent-key, Idempotency-Key; 201 the pending request with its consentUrl. */
export const handler = httpHandler(async (req) => {
  const { agent } = await authenticate(req, AUTH_MESSAGES.grantRequests, false);
  const idempotencyKey = requireIdempotencyKey(req);
  const terms = parseJsonBody(req, createGrantRequestSchema);
  return requestGrant({ agent, idempotencyKey, baseUrl: publicBaseUrl(), terms });
});
