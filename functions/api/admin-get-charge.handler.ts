import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateAdmin } from '../use-cases/auth';
import { readCharge } from '../use-cases/charges';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.adminGetCharge });

/** GET /api/v1/admin/charges/{id} — the operator (IAM or x-admin-key): any agent's charge. */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  return readCharge(undefined, req.params.id);
});
