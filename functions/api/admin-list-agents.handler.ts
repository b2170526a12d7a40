import { loadConfig } from '../config';
import { listAgentsQuerySchema } from '../contracts/request.schemas';
import { validate } from '../contracts/validation';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { listAgentsForOperator } from '../use-cases/agents';
import { authenticateAdmin } from '../use-cases/auth';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.adminListAgents });

/** GET /api/v1/admin/agents?enabled=&limit=&cursor= — the operator (IAM or x-admin-key): agents newest first, e.g. those waiting to be enabled. */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  return listAgentsForOperator(validate(listAgentsQuerySchema, req.query));
});
