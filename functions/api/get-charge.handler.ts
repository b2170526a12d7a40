import { loadConfig, NEEDS_ADMIN_KEY } from '../config';
import { UnauthorizedError } from '../core/errors';
import { httpHandler } from '../http/handler';
import { AUTH_MESSAGES, authenticate, authenticateAdmin } from '../use-cases/auth';
import { readCharge } from '../use-cases/charges';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration.
loadConfig({ require: NEEDS_ADMIN_KEY });

/** GET /api/v1/agents/charge/{id} — the creating agent's x-agent-key, or the x-admin-key. */
export const handler = httpHandler(async (req) => {
  if (req.headers['x-agent-key'] !== undefined) {
    const { agent } = await authenticate(req, AUTH_MESSAGES.getCharge, false);
    return readCharge(agent.id, req.params.id);
  }
  if (req.headers['x-admin-key'] !== undefined) {
    await authenticateAdmin(req);
    return readCharge(undefined, req.params.id);
  }
  throw new UnauthorizedError(AUTH_MESSAGES.getCharge);
});
