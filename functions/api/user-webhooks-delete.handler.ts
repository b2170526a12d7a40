import { httpHandler } from '../http/handler';
import { authenticateUser } from '../use-cases/auth';
import { deleteOwnerWebhook } from '../use-cases/webhooks';

/** DELETE /api/v1/users/me/webhooks/{id} — x-user-key. */
export const handler = httpHandler(async (req) => {
  const owner = { kind: 'user' as const, id: (await authenticateUser(req)).userId };
  return deleteOwnerWebhook(owner, req.params.id);
});
