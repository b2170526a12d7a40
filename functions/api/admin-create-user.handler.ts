import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateAdmin } from '../use-cases/auth';
import { optionalIdempotencyKey } from '../use-cases/idempotency';
import { createUserByOperator } from '../use-cases/users';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.adminCreateUser });

/** POST /api/v1/admin/users — the operator (IAM or x-admin-key); the user key is returned once (again, to a replay of an optional Idempotency-Key). */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  return createUserByOperator(optionalIdempotencyKey(req));
});
