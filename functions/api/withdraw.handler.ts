import { loadConfig } from '../config';
import { withdrawSchema } from '../contracts/withdraw.schema';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';
import { requireIdempotencyKey } from '../use-cases/idempotency';
import { createWithdrawal } from '../use-cases/withdrawals';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.withdraw });

/** POST /api/v1/agents/withdraw — x-agent-key, Idempotency-Key; checks in the order docs/payouts.md gives. */
export const handler = httpHandler(async (req) => {
  const { agent } = await authenticate(req, AUTH_MESSAGES.withdraw, false);
  const idempotencyKey = requireIdempotencyKey(req);
  const body = parseJsonBody(req, withdrawSchema);
  return createWithdrawal({ agent, idempotencyKey, ...body });
});
