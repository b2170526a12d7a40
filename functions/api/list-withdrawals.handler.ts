import { listWithdrawalsQuerySchema } from '../contracts/request.schemas';
import { validate } from '../contracts/validation';
import { httpHandler } from '../http/handler';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { listWithdrawals } from '../use-cases/withdrawals';

/** GET /api/v1/agents/withdraw?limit=&cursor= (newest first) or ?payoutId= (one Payout) — x-agent-key. */
export const handler = httpHandler(async (req) => {
  const { agent } = await authenticate(req, AUTH_MESSAGES.listWithdrawals, false);
  return listWithdrawals(agent.id, validate(listWithdrawalsQuerySchema, req.query));
});
