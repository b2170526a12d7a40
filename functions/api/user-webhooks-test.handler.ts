import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { sendTestEvent } from '../use-cases/webhooks';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.userWebhooksTest });

/** POST /api/v1/users/me/webhooks/{id}/test — x-user-key. */
export const handler = httpHandler(async (req) => {
  const owner = { kind: 'user' as const, id: (await authenticateUser(req)).userId };
  return sendTestEvent(owner, req.params.id);
});
