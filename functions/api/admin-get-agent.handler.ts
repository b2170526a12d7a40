import { loadConfig, NEEDS_ADMIN_AUTH } from '../config';
import { httpHandler } from '../http/handler';
import { readAgent } from '../use-cases/agents';
import { authenticateAdmin } from '../use-cases/auth';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration.
loadConfig({ require: NEEDS_ADMIN_AUTH });

/** GET /api/v1/admin/agents/{id} — the operator (IAM or x-admin-key): an agent and its withdrawable balance. */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  return readAgent(req.params.id);
});
