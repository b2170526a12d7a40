import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import { publicBaseUrl } from '../http/request';
import * as NEEDS from '../registry/needs.generated';
import { x402Settings } from '../use-cases/x402';
import { readOnlyFacilitator } from '../x402/facilitator';
import { authenticateX402Agent } from './x402-request';

loadConfig({ require: NEEDS.agentX402Settings });

/** GET /api/v1/agents/x402 — the agent key; what the seller's x402 middleware is configured with, its seller memo included. */
export const handler = httpHandler(async (req) => {
  const agent = await authenticateX402Agent(req);
  return { statusCode: 200, body: x402Settings(await readOnlyFacilitator(), agent, publicBaseUrl()) };
});
