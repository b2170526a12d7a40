import { httpHandler } from '../http/handler';
import { authenticateUser } from '../use-cases/auth';
import { releaseMyCharge } from '../use-cases/payers';

/** POST /api/v1/users/me/charges/{id}/release — x-user-key (the account key): the payer ends an open hold. */
export const handler = httpHandler(async (req) => releaseMyCharge((await authenticateUser(req)).userId, req.params.id));
