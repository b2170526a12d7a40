import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { x402Settle } from '../use-cases/x402';
import { signingFacilitator } from '../x402/facilitator';
import { authenticateX402Agent, facilitatorRequest } from './x402-request';

loadConfig({ require: NEEDS.x402Settle });

/**
 * POST /x402/settle — the seller's agent key; settles with the stock scheme and credits the agent's
 * USDC balance once per payment; an x402 SettleResponse (a refusal is 200 success:false).
 */
export const handler = httpHandler(async (req) => {
  const agent = await authenticateX402Agent(req);
  const request = facilitatorRequest(req);
  return x402Settle(await signingFacilitator(), agent, request);
});
