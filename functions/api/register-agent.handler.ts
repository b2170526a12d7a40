import { registerAgentSchema } from '../contracts/request.schemas';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import { registerAgent } from '../use-cases/agents';

/** POST /api/v1/agents/register — no authentication. */
export const handler = httpHandler(async (req) => registerAgent(parseJsonBody(req, registerAgentSchema)));
