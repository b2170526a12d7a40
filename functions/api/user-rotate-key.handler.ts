import { httpHandler } from '../http/handler';
import { authenticateUser } from '../use-cases/auth';
import { rotateMyKey } from '../use-cases/payers';

/** POST /api/v1/users/me/keys/rotate — x-user-key; answers the new key once. */
export const handler = httpHandler(async (req) => {
  const { userId, userKeyHash } = await authenticateUser(req);
  return rotateMyKey(userId, userKeyHash);
});
