import { httpHandler } from '../http/handler';
import { authenticateUser } from '../use-cases/auth';
import { readPolicy } from '../use-cases/payers';

/** GET /api/v1/users/me/policy — x-user-key. */
export const handler = httpHandler(async (req) => readPolicy((await authenticateUser(req)).userId));
