import { loadConfig } from '../config';
import { releaseChargeSchema } from '../contracts/request.schemas';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateAdmin } from '../use-cases/auth';
import { requireIdempotencyKey } from '../use-cases/idempotency';
import { cancelPayout } from '../use-cases/payout-holds';
import { parseOptionalJsonBody } from './optional-body';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.adminCancelPayout });

/** POST /api/v1/admin/agents/{id}/payouts/{payoutId}/cancel — the operator (IAM or x-admin-key), Idempotency-Key, no body (or `{}`). */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  const idempotencyKey = requireIdempotencyKey(req);
  parseOptionalJsonBody(req, releaseChargeSchema);
  return cancelPayout({ agentId: req.params.id, payoutId: req.params.payoutId, idempotencyKey });
});
