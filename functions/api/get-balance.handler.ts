import { httpHandler } from '../http/handler';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { agentBalance } from '../use-cases/charges';

/** GET /api/v1/agents/balance — x-agent-key; what the agent has earned and may withdraw. */
export const handler = httpHandler(async (req) => {
  const { agent } = await authenticate(req, AUTH_MESSAGES.balance, false);
  return agentBalance(agent.id);
});
