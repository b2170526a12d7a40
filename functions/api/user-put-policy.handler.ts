import { policySchema } from '../contracts/request.schemas';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import { authenticateUser } from '../use-cases/auth';
import { setPolicy } from '../use-cases/payers';

/** PUT /api/v1/users/me/policy — x-user-key; the body replaces the whole policy. */
export const handler = httpHandler(async (req) => {
  const { userId } = await authenticateUser(req);
  return setPolicy(userId, parseJsonBody(req, policySchema));
});
