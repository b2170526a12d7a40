import { loadConfig } from '../config';
import { releaseChargeSchema } from '../contracts/request.schemas';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateAdmin } from '../use-cases/auth';
import { releasePayout } from '../use-cases/payout-holds';
import { parseOptionalJsonBody } from './optional-body';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.adminReleasePayout });

/** POST /api/v1/admin/agents/{id}/payouts/{payoutId}/release — the operator (IAM or x-admin-key), no body (or `{}`). */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  parseOptionalJsonBody(req, releaseChargeSchema);
  return releasePayout(req.params.id, req.params.payoutId);
});
