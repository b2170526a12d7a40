/**
 * The agent's x402 purchases listed, as an operation (DESIGN §22): apart from the other purchase
 * operations (x402-purchases.ts) so its function bundles neither the hot wallet's signer nor the
 * chain (no Solana library).
 */
import { encodeCursor } from '../contracts/cursor';
import { purchaseView } from '../contracts/views';
import { listX402PaymentsQuerySchema } from '../contracts/x402';
import { isId } from '../core/ids';
import { AUTH_MESSAGES } from '../messages/credentials';
import * as NEEDS from '../registry/needs.generated';
import { listPurchases } from '../use-cases/x402-purchases/purchases';
import { operation } from './operation';
import { pageOf } from './x402-page';

/** GET /api/v1/agents/x402/purchases?limit=&cursor=: the agent key; its x402 purchases, newest first. */
export const listPurchasesOperation = operation({
  route: 'agent-x402-purchases-list',
  needs: NEEDS.agentX402PurchasesList,
  credentials: { kind: 'agentOrBearer', refusal: AUTH_MESSAGES.x402 },
  idempotency: 'none',
  query: listX402PaymentsQuerySchema,
  // Each captured purchase's receipt link (on PUBLIC_BASE_URL).
  links: true,
  run: async ({ caller: { agent }, query }) => {
    const { limit, after } = pageOf(query, (id) => isId('charge', id));
    return { limit, ...(await listPurchases(agent.id, { limit, ...(after ? { after } : {}) })) };
  },
  render: ({ charges, lastId, limit }, { baseUrl }) => ({
    statusCode: 200,
    body: { data: charges.map((c) => purchaseView(c, baseUrl)), nextCursor: lastId ? encodeCursor([lastId, limit]) : null },
  }),
});
