import { loadConfig } from '../config';
import { creditSchema } from '../contracts/request.schemas';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateAdmin } from '../use-cases/auth';
import { requireIdempotencyKey } from '../use-cases/idempotency';
import { creditUserBalance } from '../use-cases/users';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.adminCreditUser });

/** POST /api/v1/admin/users/{id}/credits — the operator (IAM or x-admin-key), Idempotency-Key. */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  const idempotencyKey = requireIdempotencyKey(req);
  const body = parseJsonBody(req, creditSchema);
  return creditUserBalance({ userId: req.params.id, idempotencyKey, ...body });
});
