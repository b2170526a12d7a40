import { stringify } from 'lossless-json';
import * as z from 'zod';
import { loadConfig } from '../config';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import { publicBaseUrl } from '../http/request';
import * as NEEDS from '../registry/needs.generated';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { requireIdempotencyKey } from '../use-cases/idempotency';
import { createPurchase, type PurchaseRequest } from '../use-cases/purchases';
import { purchaseSignerFor } from '../x402/purchase-signer';

// Signs the payment with the hot wallet; above a threshold it asks the payer, as a charge does.
loadConfig({ require: NEEDS.agentX402PurchaseCreate });

const anyObject = z.record(z.string(), z.unknown());

/** POST /api/v1/agents/x402/purchases — x-agent-key, x-user-key (an account key or a grant key), Idempotency-Key. */
export const handler = httpHandler(async (req) => {
  const { agent, userId, userKeyHash, grant } = await authenticate(req, AUTH_MESSAGES.createCharge, true);
  const idempotencyKey = requireIdempotencyKey(req);
  // The x402 wire format carries no money in JSON numbers (amounts are strings of atomic units): plain JSON.
  const body = JSON.parse(stringify(parseJsonBody(req, anyObject)) ?? '{}') as PurchaseRequest;
  return createPurchase({ agent, userId, userKeyHash, grant, idempotencyKey, baseUrl: publicBaseUrl(), body, signer: purchaseSignerFor });
});
