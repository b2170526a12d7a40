import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import { routeConfigNeeds } from '../registry/routes';
import { authenticateAdmin } from '../use-cases/auth';
import { createUserWithKey } from '../use-cases/users';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration.
loadConfig({ require: routeConfigNeeds('admin-create-user') });

/** POST /api/v1/admin/users — the operator (IAM or x-admin-key); the user key is returned once. */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  return createUserWithKey();
});
