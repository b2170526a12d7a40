import { loadConfig } from '../config';
import { policySchema } from '../contracts/request.schemas';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { setPolicy } from '../use-cases/payers';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.userPutPolicy });

/** PUT /api/v1/users/me/policy — x-user-key; the body replaces the whole policy. */
export const handler = httpHandler(async (req) => {
  const { userId } = await authenticateUser(req);
  return setPolicy(userId, parseJsonBody(req, policySchema));
});
