import { loadConfig } from '../config';
import { listChargesQuerySchema } from '../contracts/request.schemas';
import { validate } from '../contracts/validation';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { listAgentCharges } from '../use-cases/charges';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.listCharges });

/** GET /api/v1/agents/charges?page=&limit=&cursor= — x-agent-key. */
export const handler = httpHandler(async (req) => {
  const { agent } = await authenticate(req, AUTH_MESSAGES.listCharges, false);
  return listAgentCharges(agent.id, validate(listChargesQuerySchema, req.query));
});
