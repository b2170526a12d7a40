import { loadConfig } from '../config';
import { refundChargeSchema } from '../contracts/request.schemas';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateAdmin } from '../use-cases/auth';
import { requireIdempotencyKey } from '../use-cases/idempotency';
import { refundChargeByOperator } from '../use-cases/lifecycle';
import { parseOptionalJsonBody } from './optional-body';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.adminRefundCharge });

/** POST /api/v1/admin/agents/{id}/charges/{chargeId}/refund — the operator (IAM or x-admin-key), Idempotency-Key, `{amount?}`. */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  const idempotencyKey = requireIdempotencyKey(req);
  const body = parseOptionalJsonBody(req, refundChargeSchema);
  return refundChargeByOperator({ agentId: req.params.id, chargeId: req.params.chargeId, idempotencyKey, ...body });
});
