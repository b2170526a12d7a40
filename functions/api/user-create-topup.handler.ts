import { loadConfig } from '../config';
import { createTopupSchema } from '../contracts/request.schemas';
import { parseJsonBody } from '../http/body';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { openTopup } from '../use-cases/topups';

// Refuses to start (fails the init) without the deposit wallet, the mint and PayPal's settings.
loadConfig({ require: NEEDS.userCreateTopup });

/** POST /api/v1/users/me/topups — x-user-key. */
export const handler = httpHandler(async (req) => {
  const { userId } = await authenticateUser(req);
  return openTopup(userId, parseJsonBody(req, createTopupSchema));
});
