/**
 * The agent's credited x402 payments listed, as an operation (DESIGN §17): apart from the
 * facilitator's operations (x402-facilitator.ts) so its function bundles neither the stock
 * facilitator nor a Solana library.
 */
import { encodeCursor } from '../contracts/cursor';
import { listX402PaymentsQuerySchema } from '../contracts/x402';
import { AUTH_MESSAGES } from '../messages/credentials';
import * as NEEDS from '../registry/needs.generated';
import { listAgentX402Payments } from '../use-cases/x402-facilitator/x402-credit';
import { operation } from './operation';
import { pageOf } from './x402-page';

const PAYMENT_ID = /^x402_[0-9a-z]{26}$/;

/** GET /api/v1/agents/x402/payments?limit=&cursor=: the agent key; credited x402 payments, newest first. */
export const x402PaymentsOperation = operation({
  route: 'agent-x402-payments',
  needs: NEEDS.agentX402Payments,
  credentials: { kind: 'agentOrBearer', refusal: AUTH_MESSAGES.x402 },
  idempotency: 'none',
  query: listX402PaymentsQuerySchema,
  run: async ({ caller: { agent }, query }) => {
    const { limit, after } = pageOf(query, (id) => PAYMENT_ID.test(id));
    return { limit, ...(await listAgentX402Payments(agent.id, { limit, ...(after ? { after } : {}) })) };
  },
  render: ({ data, lastId, limit }) => ({ statusCode: 200, body: { data, nextCursor: lastId ? encodeCursor([lastId, limit]) : null } }),
});
