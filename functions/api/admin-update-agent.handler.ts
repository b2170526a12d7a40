import { loadConfig } from '../config';
import { updateAgentSchema } from '../contracts/request.schemas';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { updateAgentEnabled } from '../use-cases/agents';
import { authenticateAdmin } from '../use-cases/auth';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.adminUpdateAgent });

/** PATCH /api/v1/admin/agents/{id} {enabled} — the operator (IAM or x-admin-key). */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  const { enabled } = parseJsonBody(req, updateAgentSchema);
  return updateAgentEnabled(req.params.id, enabled);
});
