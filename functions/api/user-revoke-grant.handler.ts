import { grantView } from '../contracts/grants';
import { httpHandler } from '../http/handler';
import { authenticateUser } from '../use-cases/auth';
import { revokeMyGrant } from '../use-cases/grants';

/** DELETE /api/v1/users/me/grants/{id} — the account key; 200 the Grant, revoked (again: the same). */
export const handler = httpHandler(async (req) => {
  const { userId } = await authenticateUser(req);
  return { statusCode: 200, body: grantView(await revokeMyGrant(userId, req.params.id)) };
});
