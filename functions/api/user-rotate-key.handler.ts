import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { rotateMyKey } from '../use-cases/account-key';
import { authenticateUser } from '../use-cases/auth';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.userRotateKey });

/** POST /api/v1/users/me/keys/rotate — x-user-key; answers the new key once. */
export const handler = httpHandler(async (req) => {
  const { userId, userKeyHash } = await authenticateUser(req);
  return rotateMyKey(userId, userKeyHash);
});
