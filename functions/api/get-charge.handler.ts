import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import { refuse } from '../messages/refusal';
import * as NEEDS from '../registry/needs.generated';
import { AUTH_MESSAGES, adminKeyAccepted, authenticate, authenticateAdmin, keySent, MISSING_KEY_HEADER } from '../use-cases/auth';
import { readCharge } from '../use-cases/charges';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.getCharge });

/**
 * GET /api/v1/agents/charge/{id} — the creating agent's x-agent-key, or the x-admin-key where the
 * stage recognises the operator by key (ADMIN_AUTH `key`); under IAM the operator reads any charge
 * through GET /api/v1/admin/charges/{id}, and x-admin-key here is no credential at all. Neither
 * sent: `missing x-agent-key header`, the header an agent (this route's caller) sends.
 */
export const handler = httpHandler(async (req) => {
  if (keySent(req.headers['x-agent-key'])) {
    const { agent } = await authenticate(req, AUTH_MESSAGES.getCharge, false);
    return readCharge(agent.id, req.params.id);
  }
  if (keySent(req.headers['x-admin-key']) && adminKeyAccepted()) {
    await authenticateAdmin(req);
    return readCharge(undefined, req.params.id);
  }
  throw refuse(MISSING_KEY_HEADER.agentKey);
});
