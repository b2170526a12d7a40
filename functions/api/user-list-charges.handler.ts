import { httpHandler } from '../http/handler';
import { validate } from '../http/validation';
import { authenticateUser } from '../use-cases/auth';
import { listMyCharges } from '../use-cases/payers';
import { listUserChargesQuerySchema } from './request.schemas';

/** GET /api/v1/users/me/charges?limit=&cursor=&status= — x-user-key. */
export const handler = httpHandler(async (req) => {
  const { userId } = await authenticateUser(req);
  return listMyCharges(userId, validate(listUserChargesQuerySchema, req.query));
});
