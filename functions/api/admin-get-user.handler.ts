import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateAdmin } from '../use-cases/auth';
import { readUser } from '../use-cases/users';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.adminGetUser });

/** GET /api/v1/admin/users/{id} — the operator (IAM or x-admin-key). */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  return readUser(req.params.id);
});
