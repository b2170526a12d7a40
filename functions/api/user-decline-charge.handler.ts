import { httpHandler } from '../http/handler';
import { authenticateUser } from '../use-cases/auth';
import { declineCharge } from '../use-cases/payers';

/** POST /api/v1/users/me/charges/{id}/decline — x-user-key. */
export const handler = httpHandler(async (req) => declineCharge((await authenticateUser(req)).userId, req.params.id));
