import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import { registerAgent } from '../use-cases/agents';
import { registerAgentSchema } from './request.schemas';

/** POST /api/v1/agents/register — no authentication. */
export const handler = httpHandler(async (req) => registerAgent(parseJsonBody(req, registerAgentSchema)));
