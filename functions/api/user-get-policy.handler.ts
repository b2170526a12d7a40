import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { readPolicy } from '../use-cases/payers';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.userGetPolicy });

/** GET /api/v1/users/me/policy — x-user-key. */
export const handler = httpHandler(async (req) => readPolicy((await authenticateUser(req)).userId));
