import { httpHandler } from '../http/handler';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { listOwnerWebhooks } from '../use-cases/webhooks';

/** GET /api/v1/agents/webhooks — x-agent-key. */
export const handler = httpHandler(async (req) => {
  const owner = { kind: 'agent' as const, id: (await authenticate(req, AUTH_MESSAGES.webhooks, false)).agent.id };
  return listOwnerWebhooks(owner);
});
