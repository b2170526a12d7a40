/**
 * The agent's own account as operations (docs/agents.md): registration, public and shown
 * once, and the key's rotation, which a disabled agent may make too (a leaked key is why it was
 * disabled), so its key is read by its form here and looked up fresh by the use case.
 */
import { answerOf } from '../contracts/api';
import { registerAgentSchema } from '../contracts/request.schemas';
import { renderRegistration } from '../contracts/settled-outcomes';
import { AUTH_MESSAGES } from '../messages/credentials';
import * as NEEDS from '../registry/needs.generated';
import { registerAgent, rotateAgentKey } from '../use-cases/identity/agents';
import { operation } from './operation';

/** POST /api/v1/agents/register: no authentication; an optional Idempotency-Key replays a lost answer. */
export const registerAgentOperation = operation({
  route: 'register-agent',
  needs: NEEDS.registerAgent,
  credentials: { kind: 'public' },
  idempotency: 'optional',
  body: { schema: registerAgentSchema },
  run: ({ idempotencyKey, body }) => registerAgent(body, { idempotencyKey }),
  render: (registration) => answerOf(renderRegistration(registration)),
});

/**
 * POST /api/v1/agents/keys/rotate: x-agent-key (enabled or not); answers the new key once. A key
 * not sent → 401 naming the header; one not of an agent key's form, or unknown → `invalid agent key`.
 */
export const rotateAgentKeyOperation = operation({
  route: 'rotate-agent-key',
  needs: NEEDS.rotateAgentKey,
  credentials: { kind: 'anyAgentKey', refusal: AUTH_MESSAGES.rotateKey },
  idempotency: 'none',
  run: ({ caller: { agentKeyHash } }) => rotateAgentKey(agentKeyHash),
  render: (rotated) => ({ statusCode: 200, body: rotated }),
});
