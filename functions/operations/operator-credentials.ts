/**
 * The operator's credentials for execute.ts (`operator`: IAM, or x-admin-key where the stage takes a
 * key; `agentOrOperatorKey`: an agent's key, or x-admin-key where the stage takes a key). A module of
 * its own, imported by the operation modules that take them, so that no other function bundles the
 * admin key's reader (execute.ts `registerOperatorCredentials`).
 */
import { MISSING_KEY_HEADER } from '../messages/credentials';
import { refuse } from '../messages/refusal';
import { adminKeyAccepted, authenticate, authenticateAdmin, keySent } from '../use-cases/auth';
import { registerOperatorCredentials } from './execute';

registerOperatorCredentials(async (credentials, req) => {
  if (credentials.kind === 'operator') {
    await authenticateAdmin(req);
    return {};
  }
  // The agent's key when sent; x-admin-key only where the stage recognises the operator by key.
  if (keySent(req.headers['x-agent-key'])) return authenticate(req, credentials.refusal, false);
  if (keySent(req.headers['x-admin-key']) && adminKeyAccepted()) {
    await authenticateAdmin(req);
    return { operator: true };
  }
  throw refuse(MISSING_KEY_HEADER.agentKey);
});
