import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { x402Verify } from '../use-cases/x402';
import { readOnlyFacilitator } from '../x402/facilitator';
import { authenticateX402Agent, facilitatorRequest } from './x402-request';

loadConfig({ require: NEEDS.x402Verify });

/**
 * POST /x402/verify — the seller's agent key; an x402 VerifyResponse (a refusal, a payment already
 * claimed included, is 200 isValid:false); a payment identifier used with another payment, 409.
 */
export const handler = httpHandler(async (req) => {
  const agent = await authenticateX402Agent(req);
  const request = facilitatorRequest(req);
  return x402Verify(await readOnlyFacilitator(), agent, request);
});
