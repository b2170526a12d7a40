import { httpHandler } from '../http/handler';
import { validate } from '../http/validation';
import { authenticateUser } from '../use-cases/auth';
import { listMyTopups } from '../use-cases/topups';
import { listTopupsQuerySchema } from './request.schemas';

/** GET /api/v1/users/me/topups?limit=&cursor= — x-user-key. */
export const handler = httpHandler(async (req) => {
  const { userId } = await authenticateUser(req);
  return listMyTopups(userId, validate(listTopupsQuerySchema, req.query));
});
