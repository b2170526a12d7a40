import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateAdmin } from '../use-cases/auth';
import { rotateUserKeyByOperator } from '../use-cases/users';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.adminRotateUserKey });

/** POST /api/v1/admin/users/{id}/keys/rotate — the operator (IAM or x-admin-key); answers the new account key once. */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  return { statusCode: 200, body: await rotateUserKeyByOperator(req.params.id) };
});
