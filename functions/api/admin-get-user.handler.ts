import { loadConfig, NEEDS_ADMIN_AUTH } from '../config';
import { httpHandler } from '../http/handler';
import { authenticateAdmin } from '../use-cases/auth';
import { readUser } from '../use-cases/users';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration.
loadConfig({ require: NEEDS_ADMIN_AUTH });

/** GET /api/v1/admin/users/{id} — the operator (IAM or x-admin-key). */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  return readUser(req.params.id);
});
