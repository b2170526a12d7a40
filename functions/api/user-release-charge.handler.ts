import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { releaseMyCharge } from '../use-cases/payers';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.userReleaseCharge });

/** POST /api/v1/users/me/charges/{id}/release — x-user-key (the account key): the payer ends an open hold. */
export const handler = httpHandler(async (req) => releaseMyCharge((await authenticateUser(req)).userId, req.params.id));
