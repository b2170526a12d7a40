import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { readTopup } from '../use-cases/topups';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.userGetTopup });

/** GET /api/v1/users/me/topups/{id} — x-user-key. */
export const handler = httpHandler(async (req) => readTopup((await authenticateUser(req)).userId, req.params.id));
