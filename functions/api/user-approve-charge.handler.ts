import { httpHandler } from '../http/handler';
import { authenticateUser } from '../use-cases/auth';
import { approveCharge } from '../use-cases/payers';

/** POST /api/v1/users/me/charges/{id}/approve — x-user-key. */
export const handler = httpHandler(async (req) => approveCharge((await authenticateUser(req)).userId, req.params.id));
