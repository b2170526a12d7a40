import { loadConfig } from '../config';
import { createGrantSchema } from '../contracts/grants';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { createGrantForPayer } from '../use-cases/grants';
import { optionalIdempotencyKey } from '../use-cases/idempotency';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.userCreateGrant });

/** POST /api/v1/users/me/grants — the account key, an optional Idempotency-Key; answers the Grant and its key, shown once (and to a replay). */
export const handler = httpHandler(async (req) => {
  const { userId, userKeyHash } = await authenticateUser(req);
  const idempotencyKey = optionalIdempotencyKey(req);
  return createGrantForPayer({ userId, accountKeyHash: userKeyHash }, parseJsonBody(req, createGrantSchema), idempotencyKey);
});
