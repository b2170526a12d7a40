import { loadConfig } from '../config';
import { decodeCursor, encodeCursor, isCount, pageLimit } from '../contracts/cursor';
import { validate } from '../contracts/validation';
import { listX402PaymentsQuerySchema } from '../contracts/x402';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { listAgentX402Payments } from '../use-cases/x402';
import { authenticateX402Agent } from './x402-request';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.agentX402Payments });

const PAYMENT_ID = /^x402_[0-9a-z]{26}$/;

/** GET /api/v1/agents/x402/payments?limit=&cursor= — the agent key; credited x402 payments, newest first. */
export const handler = httpHandler(async (req) => {
  const agent = await authenticateX402Agent(req);
  const query = validate(listX402PaymentsQuerySchema, req.query);
  const cursor = query.cursor
    ? decodeCursor(query.cursor, ([after, limit, ...rest]) =>
        rest.length === 0 && typeof after === 'string' && PAYMENT_ID.test(after) && isCount(limit) ? { after, limit } : undefined,
      )
    : undefined;
  const limit = pageLimit(query.limit, cursor?.limit);
  const page = await listAgentX402Payments(agent.id, { limit, ...(cursor ? { after: cursor.after } : {}) });
  return { statusCode: 200, body: { data: page.data, nextCursor: page.lastId ? encodeCursor([page.lastId, limit]) : null } };
});
