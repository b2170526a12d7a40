import { loadConfig } from '../config';
import { AGENT_KEY_PREFIX, hashKey, looksLikeKey } from '../core/keys';
import { httpHandler } from '../http/handler';
import { refuse } from '../messages/refusal';
import * as NEEDS from '../registry/needs.generated';
import { rotateAgentKey } from '../use-cases/agents';
import { AUTH_MESSAGES, keySent, MISSING_KEY_HEADER } from '../use-cases/auth';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.rotateAgentKey });

/** POST /api/v1/agents/keys/rotate — x-agent-key (enabled or not); answers the new key once. */
export const handler = httpHandler(async (req) => {
  const agentKey = req.headers['x-agent-key'];
  if (!keySent(agentKey)) throw refuse(MISSING_KEY_HEADER.agentKey);
  if (!looksLikeKey(agentKey, AGENT_KEY_PREFIX)) throw refuse(AUTH_MESSAGES.rotateKey);
  return rotateAgentKey(hashKey(agentKey));
});
