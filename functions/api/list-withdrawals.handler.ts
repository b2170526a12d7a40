import { loadConfig } from '../config';
import { listWithdrawalsQuerySchema } from '../contracts/request.schemas';
import { validate } from '../contracts/validation';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { listWithdrawals } from '../use-cases/withdrawals';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.listWithdrawals });

/** GET /api/v1/agents/withdraw?limit=&cursor= (newest first) or ?payoutId= (one Payout) — x-agent-key. */
export const handler = httpHandler(async (req) => {
  const { agent } = await authenticate(req, AUTH_MESSAGES.listWithdrawals, false);
  return listWithdrawals(agent.id, validate(listWithdrawalsQuerySchema, req.query));
});
