import { loadConfig } from '../config';
import { registerAgentSchema } from '../contracts/request.schemas';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { registerAgent } from '../use-cases/agents';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.registerAgent });

/** POST /api/v1/agents/register — no authentication. */
export const handler = httpHandler(async (req) => registerAgent(parseJsonBody(req, registerAgentSchema)));
