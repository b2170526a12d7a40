import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { declineCharge } from '../use-cases/payers';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.userDeclineCharge });

/** POST /api/v1/users/me/charges/{id}/decline — x-user-key. */
export const handler = httpHandler(async (req) => declineCharge((await authenticateUser(req)).userId, req.params.id));
