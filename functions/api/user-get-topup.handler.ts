import { httpHandler } from '../http/handler';
import { authenticateUser } from '../use-cases/auth';
import { readTopup } from '../use-cases/topups';

/** GET /api/v1/users/me/topups/{id} — x-user-key. */
export const handler = httpHandler(async (req) => readTopup((await authenticateUser(req)).userId, req.params.id));
