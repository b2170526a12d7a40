import { loadConfig } from '../config';
import { listUserChargesQuerySchema } from '../contracts/request.schemas';
import { validate } from '../contracts/validation';
import { httpHandler } from '../http/handler';
import { publicBaseUrl } from '../http/request';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { listMyCharges } from '../use-cases/payers';

// PENDING charges that wait for the payer carry their approval links (on PUBLIC_BASE_URL).
loadConfig({ require: NEEDS.userListCharges });

/** GET /api/v1/users/me/charges?limit=&cursor=&status= — x-user-key. */
export const handler = httpHandler(async (req) => {
  const { userId } = await authenticateUser(req);
  return listMyCharges(userId, validate(listUserChargesQuerySchema, req.query), publicBaseUrl());
});
