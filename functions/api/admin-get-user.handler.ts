import { httpHandler } from '../http/handler';
import { authenticateAdmin } from '../use-cases/auth';
import { readUser } from '../use-cases/users';

/** GET /api/v1/admin/users/{id} — x-admin-key. */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  return readUser(req.params.id);
});
