import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { readAgent } from '../use-cases/agents';
import { authenticateAdmin } from '../use-cases/auth';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.adminGetAgent });

/** GET /api/v1/admin/agents/{id} — the operator (IAM or x-admin-key): an agent and its withdrawable balance. */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  return readAgent(req.params.id);
});
