import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { readMe } from '../use-cases/payers';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.userMe });

/** GET /api/v1/users/me — x-user-key. */
export const handler = httpHandler(async (req) => readMe((await authenticateUser(req)).userId));
