import { httpHandler } from '../http/handler';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { deleteOwnerWebhook } from '../use-cases/webhooks';

/** DELETE /api/v1/agents/webhooks/{id} — x-agent-key. */
export const handler = httpHandler(async (req) => {
  const owner = { kind: 'agent' as const, id: (await authenticate(req, AUTH_MESSAGES.webhooks, false)).agent.id };
  return deleteOwnerWebhook(owner, req.params.id);
});
