import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import { updateAgentEnabled } from '../use-cases/agents';
import { authenticateAdmin } from '../use-cases/auth';
import { updateAgentSchema } from './request.schemas';

/** PATCH /api/v1/admin/agents/{id} {enabled} — x-admin-key. */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  const { enabled } = parseJsonBody(req, updateAgentSchema);
  return updateAgentEnabled(req.params.id, enabled);
});
