import { loadConfig } from '../config';
import { grantView } from '../contracts/grants';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { revokeMyGrant } from '../use-cases/grants';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.userRevokeGrant });

/** DELETE /api/v1/users/me/grants/{id} — the account key; 200 the Grant, revoked (again: the same). */
export const handler = httpHandler(async (req) => {
  const { userId } = await authenticateUser(req);
  return { statusCode: 200, body: grantView(await revokeMyGrant(userId, req.params.id)) };
});
