import { grantView } from '../contracts/grants';
import { httpHandler } from '../http/handler';
import { authenticateUser } from '../use-cases/auth';
import { readGrant } from '../use-cases/grants';

/** GET /api/v1/users/me/grants/{id} — the account key. */
export const handler = httpHandler(async (req) => {
  const { userId } = await authenticateUser(req);
  return { statusCode: 200, body: grantView(await readGrant(userId, req.params.id)) };
});
