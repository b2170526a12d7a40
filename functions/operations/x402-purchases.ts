/**
 * x402 purchases as operations (DESIGN §22, docs/x402.md "Buying from x402 sellers"): an agent
 * pays any x402 seller from its payer's USDC — the purchase made, read, and its receipt (the list
 * is x402-purchase-list.ts: its function bundles no Solana library). Each is its route's one
 * definition; functions/api/agent-x402-purchase*.handler.ts and the MCP tool `x402_purchase` are
 * derived from these objects.
 *
 * The hot wallet's signer (it carries @solana/kit) and the chain are loaded only when a purchase is
 * made, read or reported: the MCP server loads them on its first purchase.
 */

import { answerOf } from '../contracts/api';
import { renderCharge } from '../contracts/charge-outcome';
import { purchaseView } from '../contracts/views';
import { createPurchaseSchema, purchaseReceiptSchema } from '../contracts/x402';
import type { Charge } from '../core/charges';
import { AUTH_MESSAGES } from '../messages/credentials';
import * as NEEDS from '../registry/needs.generated';
import { createPurchase, getPurchase, type PurchaseRequest, reportReceipt } from '../use-cases/x402-purchases/purchases';
import { operation, type RenderContext } from './operation';

const purchaseSigner = async () => (await import('../x402/purchase-signer')).purchaseSignerFor();
const purchaseChain = async () => (await import('../x402/purchase-chain')).purchaseChain();

/** A purchase as its answer (200). */
export const purchaseAnswer = (charge: Charge, { baseUrl }: RenderContext) => ({ statusCode: 200, body: purchaseView(charge, baseUrl) });

/**
 * POST /api/v1/agents/x402/purchases: x-agent-key, x-user-key (an account key or a grant key),
 * Idempotency-Key. Signs the payment with the hot wallet; above a threshold it asks the payer, as a
 * charge does. The body is read as plain JSON and judged by the use case field by field, in its own
 * order and words (`paymentRequirements.asset: unsupported asset`); `createPurchaseSchema` documents it.
 */
export const createPurchaseOperation = operation({
  route: 'agent-x402-purchase-create',
  needs: NEEDS.agentX402PurchaseCreate,
  credentials: { kind: 'agentForPayer', refusal: AUTH_MESSAGES.createCharge },
  idempotency: 'required',
  body: { schema: createPurchaseSchema, plainJson: { checks: 'run' } },
  // A purchase above its payer's approval threshold is approved as any charge (links on PUBLIC_BASE_URL).
  links: true,
  run: ({ caller: { agent, userId, userKeyHash, grant }, idempotencyKey, body, baseUrl }) =>
    createPurchase({ agent, userId, userKeyHash, grant, idempotencyKey, baseUrl, body: body as PurchaseRequest, signer: purchaseSigner }),
  render: (outcome, { baseUrl }) => answerOf(renderCharge(outcome, baseUrl)),
});

/** GET /api/v1/agents/x402/purchases/{id}: the agent key; the purchase, with its payment once it may be paid (signed on the first read after approval). */
export const getPurchaseOperation = operation({
  route: 'agent-x402-purchase-get',
  needs: NEEDS.agentX402PurchaseGet,
  credentials: { kind: 'agentOrBearer', refusal: AUTH_MESSAGES.x402 },
  idempotency: 'none',
  // A captured purchase's receipt link (on PUBLIC_BASE_URL).
  links: true,
  run: ({ caller: { agent }, params }) => getPurchase(agent.id, params.id, purchaseSigner),
  render: purchaseAnswer,
});

/** POST /api/v1/agents/x402/purchases/{id}/receipt: the agent key, `{transaction}` (the seller's PAYMENT-RESPONSE): checked on chain, captured. */
export const purchaseReceiptOperation = operation({
  route: 'agent-x402-purchase-receipt',
  needs: NEEDS.agentX402PurchaseReceipt,
  credentials: { kind: 'agentOrBearer', refusal: AUTH_MESSAGES.x402 },
  idempotency: 'none',
  body: { schema: purchaseReceiptSchema },
  // The purchase it captures answers with its receipt link (on PUBLIC_BASE_URL).
  links: true,
  run: ({ caller: { agent }, params, body }) => reportReceipt(agent.id, params.id, body, purchaseChain),
  render: purchaseAnswer,
});
