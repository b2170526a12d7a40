import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { listOwnerWebhooks } from '../use-cases/webhooks';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.agentWebhooksList });

/** GET /api/v1/agents/webhooks — x-agent-key. */
export const handler = httpHandler(async (req) => {
  const owner = { kind: 'agent' as const, id: (await authenticate(req, AUTH_MESSAGES.webhooks, false)).agent.id };
  return listOwnerWebhooks(owner);
});
