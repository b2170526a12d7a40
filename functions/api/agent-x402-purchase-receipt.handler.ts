import { loadConfig } from '../config';
import { purchaseReceiptSchema } from '../contracts/x402';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { reportReceipt } from '../use-cases/purchases';
import { purchaseChain } from '../x402/purchase-chain';
import { authenticateX402Agent } from './x402-request';

loadConfig({ require: NEEDS.agentX402PurchaseReceipt });

/** POST /api/v1/agents/x402/purchases/{id}/receipt — the agent key, `{transaction}` (the seller's PAYMENT-RESPONSE): checked on chain, captured. */
export const handler = httpHandler(async (req) => {
  const agent = await authenticateX402Agent(req);
  return reportReceipt(agent.id, req.params.id, parseJsonBody(req, purchaseReceiptSchema), purchaseChain);
});
