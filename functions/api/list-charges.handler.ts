import { listChargesQuerySchema } from '../contracts/request.schemas';
import { validate } from '../contracts/validation';
import { httpHandler } from '../http/handler';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { listAgentCharges } from '../use-cases/charges';

/** GET /api/v1/agents/charges?page=&limit=&cursor= — x-agent-key. */
export const handler = httpHandler(async (req) => {
  const { agent } = await authenticate(req, AUTH_MESSAGES.listCharges, false);
  return listAgentCharges(agent.id, validate(listChargesQuerySchema, req.query));
});
