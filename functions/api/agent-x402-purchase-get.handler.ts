import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { getPurchase } from '../use-cases/purchases';
import { purchaseSignerFor } from '../x402/purchase-signer';
import { authenticateX402Agent } from './x402-request';

// A purchase its payer approved gets its payment on the first read: the hot wallet signs it then.
loadConfig({ require: NEEDS.agentX402PurchaseGet });

/** GET /api/v1/agents/x402/purchases/{id} — the agent key; the purchase, with its payment once it may be paid. */
export const handler = httpHandler(async (req) => {
  const agent = await authenticateX402Agent(req);
  return getPurchase(agent.id, req.params.id, purchaseSignerFor);
});
