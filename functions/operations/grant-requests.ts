/**
 * Grant requests as operations (docs/grants.md): the agent asks for terms and gets a consent link
 * for its payer, then polls. Both hand out the consent link on the API's public address (`links`).
 */
import { answerOf } from '../contracts/api';
import { renderGrantRequestCreated } from '../contracts/grant-request-outcome';
import { createGrantRequestSchema } from '../contracts/grants';
import { AUTH_MESSAGES } from '../messages/credentials';
import * as NEEDS from '../registry/needs.generated';
import { readGrantRequest, requestGrant } from '../use-cases/identity/grant-requests';
import { operation } from './operation';

/** POST /api/v1/agents/grant-requests: x-agent-key, Idempotency-Key; 201 the pending request with its consentUrl. */
export const agentCreateGrantRequestOperation = operation({
  route: 'agent-create-grant-request',
  needs: NEEDS.agentCreateGrantRequest,
  credentials: { kind: 'agent', refusal: AUTH_MESSAGES.grantRequests },
  idempotency: 'required',
  body: { schema: createGrantRequestSchema },
  // Hands out consent links (on PUBLIC_BASE_URL), their tokens derived from the approval secret.
  links: true,
  run: ({ caller: { agent }, idempotencyKey, body, baseUrl }) => requestGrant({ agent, idempotencyKey, baseUrl, terms: body }),
  render: (created) => answerOf(renderGrantRequestCreated(created)),
});

/** GET /api/v1/agents/grant-requests/{id}: x-agent-key; the first read after approval carries the grant key, once. */
export const agentGetGrantRequestOperation = operation({
  route: 'agent-get-grant-request',
  needs: NEEDS.agentGetGrantRequest,
  credentials: { kind: 'agent', refusal: AUTH_MESSAGES.grantRequests },
  idempotency: 'none',
  // The answer shows the consent link.
  links: true,
  run: ({ caller: { agent }, params, baseUrl }) => readGrantRequest(agent, params.id, baseUrl),
  render: (view) => ({ statusCode: 200, body: view }),
});
