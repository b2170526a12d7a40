import { httpHandler } from '../http/handler';
import { rotateMyKey } from '../use-cases/account-key';
import { authenticateUser } from '../use-cases/auth';

/** POST /api/v1/users/me/keys/rotate — x-user-key; answers the new key once. */
export const handler = httpHandler(async (req) => {
  const { userId, userKeyHash } = await authenticateUser(req);
  return rotateMyKey(userId, userKeyHash);
});
