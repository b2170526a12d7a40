import { loadConfig } from '../config';
import { listTopupsQuerySchema } from '../contracts/request.schemas';
import { validate } from '../contracts/validation';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { listMyTopups } from '../use-cases/topups';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.userListTopups });

/** GET /api/v1/users/me/topups?limit=&cursor= — x-user-key. */
export const handler = httpHandler(async (req) => {
  const { userId } = await authenticateUser(req);
  return listMyTopups(userId, validate(listTopupsQuerySchema, req.query));
});
