import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { AUTH_MESSAGES, authenticate, requireCurrentAgent } from '../use-cases/auth';
import { sendTestEvent } from '../use-cases/webhooks';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.agentWebhooksTest });

/** POST /api/v1/agents/webhooks/{id}/test — x-agent-key. */
export const handler = httpHandler(async (req) => {
  const { agent } = await authenticate(req, AUTH_MESSAGES.webhooks, false);
  const owner = { kind: 'agent' as const, id: agent.id };
  // The auth cache may be 30 s behind a disable or a rotation: the agent item decides.
  await requireCurrentAgent(agent, AUTH_MESSAGES.webhooks);
  return sendTestEvent(owner, req.params.id);
});
