import { listTopupsQuerySchema } from '../contracts/request.schemas';
import { validate } from '../contracts/validation';
import { httpHandler } from '../http/handler';
import { authenticateUser } from '../use-cases/auth';
import { listMyTopups } from '../use-cases/topups';

/** GET /api/v1/users/me/topups?limit=&cursor= — x-user-key. */
export const handler = httpHandler(async (req) => {
  const { userId } = await authenticateUser(req);
  return listMyTopups(userId, validate(listTopupsQuerySchema, req.query));
});
