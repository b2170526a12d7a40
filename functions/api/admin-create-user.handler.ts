import { httpHandler } from '../http/handler';
import { authenticateAdmin } from '../use-cases/auth';
import { createUserWithKey } from '../use-cases/users';

/** POST /api/v1/admin/users — x-admin-key; the user key is returned once. */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  return createUserWithKey();
});
