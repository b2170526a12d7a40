import { httpHandler } from '../http/handler';
import { authenticateUser } from '../use-cases/auth';
import { readMe } from '../use-cases/payers';

/** GET /api/v1/users/me — x-user-key. */
export const handler = httpHandler(async (req) => readMe((await authenticateUser(req)).userId));
