import { httpHandler } from '../http/handler';
import { authenticateUser } from '../use-cases/auth';
import { listOwnerWebhooks } from '../use-cases/webhooks';

/** GET /api/v1/users/me/webhooks — x-user-key. */
export const handler = httpHandler(async (req) => {
  const owner = { kind: 'user' as const, id: (await authenticateUser(req)).userId };
  return listOwnerWebhooks(owner);
});
