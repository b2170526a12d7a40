import { loadConfig } from '../config';
import { createGrantSchema, grantView } from '../contracts/grants';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { issueGrant } from '../use-cases/grants';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.userCreateGrant });

/** POST /api/v1/users/me/grants — the account key; answers the Grant and its key, shown once. */
export const handler = httpHandler(async (req) => {
  const { userId, userKeyHash } = await authenticateUser(req);
  const { agentId, ...terms } = parseJsonBody(req, createGrantSchema);
  const { grant, key } = await issueGrant({ userId, accountKeyHash: userKeyHash }, agentId, terms);
  return { statusCode: 201, body: { ...grantView(grant), key } };
});
