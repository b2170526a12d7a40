import { loadConfig, NEEDS_ADMIN_AUTH } from '../config';
import { httpHandler } from '../http/handler';
import { authenticateAdmin } from '../use-cases/auth';
import { readCharge } from '../use-cases/charges';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration.
loadConfig({ require: NEEDS_ADMIN_AUTH });

/** GET /api/v1/admin/charges/{id} — the operator (IAM or x-admin-key): any agent's charge. */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  return readCharge(undefined, req.params.id);
});
