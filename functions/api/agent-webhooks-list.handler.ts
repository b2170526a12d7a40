import { httpHandler } from '../http/handler';
import { AUTH_MESSAGES, authenticateAgentAnyState } from '../use-cases/auth';
import { listOwnerWebhooks } from '../use-cases/webhooks';

/** GET /api/v1/agents/webhooks — x-agent-key. */
export const handler = httpHandler(async (req) => {
  const owner = { kind: 'agent' as const, id: (await authenticateAgentAnyState(req, AUTH_MESSAGES.webhooks)).id };
  return listOwnerWebhooks(owner);
});
