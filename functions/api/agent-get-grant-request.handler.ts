import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import { publicBaseUrl } from '../http/request';
import * as NEEDS from '../registry/needs.generated';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { readGrantRequest } from '../use-cases/grant-requests';

// The first read after approval derives the grant's key from the approval secret; the answer shows the consent link.
loadConfig({ require: NEEDS.agentGetGrantRequest });

/** GET /api/v1/agents/grant-requests/{id} — x-agent-key; the first read after approval carries the grant key, once. */
export const handler = httpHandler(async (req) => {
  const { agent } = await authenticate(req, AUTH_MESSAGES.grantRequests, false);
  return { statusCode: 200, body: await readGrantRequest(agent, req.params.id, publicBaseUrl()) };
});
