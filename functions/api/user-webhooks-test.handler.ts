import { httpHandler } from '../http/handler';
import { authenticateUser } from '../use-cases/auth';
import { sendTestEvent } from '../use-cases/webhooks';

/** POST /api/v1/users/me/webhooks/{id}/test — x-user-key. */
export const handler = httpHandler(async (req) => {
  const owner = { kind: 'user' as const, id: (await authenticateUser(req)).userId };
  return sendTestEvent(owner, req.params.id);
});
