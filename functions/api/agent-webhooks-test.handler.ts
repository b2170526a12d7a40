import { httpHandler } from '../http/handler';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { sendTestEvent } from '../use-cases/webhooks';

/** POST /api/v1/agents/webhooks/{id}/test — x-agent-key. */
export const handler = httpHandler(async (req) => {
  const owner = { kind: 'agent' as const, id: (await authenticate(req, AUTH_MESSAGES.webhooks, false)).agent.id };
  return sendTestEvent(owner, req.params.id);
});
