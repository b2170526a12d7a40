import { listUserChargesQuerySchema } from '../contracts/request.schemas';
import { validate } from '../contracts/validation';
import { httpHandler } from '../http/handler';
import { authenticateUser } from '../use-cases/auth';
import { listMyCharges } from '../use-cases/payers';

/** GET /api/v1/users/me/charges?limit=&cursor=&status= — x-user-key. */
export const handler = httpHandler(async (req) => {
  const { userId } = await authenticateUser(req);
  return listMyCharges(userId, validate(listUserChargesQuerySchema, req.query));
});
