import { loadConfig } from '../config';
import { adminListPayoutsQuerySchema } from '../contracts/request.schemas';
import { validate } from '../contracts/validation';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateAdmin } from '../use-cases/auth';
import { listPayoutsForOperator } from '../use-cases/payout-holds';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.adminListPayouts });

/** GET /api/v1/admin/payouts?status=HELD&limit=&cursor= — the operator (IAM or x-admin-key): held payouts, oldest first. */
export const handler = httpHandler(async (req) => {
  await authenticateAdmin(req);
  return listPayoutsForOperator(validate(adminListPayoutsQuerySchema, req.query));
});
