import { loadConfig } from '../config';
import { listChargesQuerySchema } from '../contracts/request.schemas';
import { validate } from '../contracts/validation';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateAdmin } from '../use-cases/auth';
import { listChargesForOperator } from '../use-cases/operator-earnings';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.adminListAgentCharges });

/** GET /api/v1/admin/agents/{id}/charges?page=&limit=&cursor= — the operator (IAM or x-admin-key): any agent's charges. */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  return listChargesForOperator(req.params.id, validate(listChargesQuerySchema, req.query));
});
