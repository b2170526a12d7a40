/**
 * The x402 facilitator as operations (DESIGN §17, docs/x402.md): what a stock x402 seller's
 * middleware calls (verify, settle, supported) and what an agent reads of its x402 side (the
 * settings its middleware is configured with; its credited payments are x402-payments.ts, whose
 * function bundles no facilitator). The seller's agent key comes
 * as `x-agent-key` or `Authorization: Bearer ag_live_…` (what a stock middleware's
 * `createAuthHeaders` sends); bodies are the x402 wire format, read as plain JSON.
 */
import type { VerifyResponse } from '@x402/core/types';
import { facilitatorRequestSchema } from '../contracts/x402';
import { AUTH_MESSAGES } from '../messages/credentials';
import * as NEEDS from '../registry/needs.generated';
import { x402Settle, x402Verify } from '../use-cases/x402-facilitator/x402';
import { x402Settings, x402Supported } from '../use-cases/x402-facilitator/x402-policy';
import { readOnlyFacilitator, signingFacilitator } from '../x402/facilitator';
import { operation } from './operation';

/** An x402 answer: the response as its JSON (200); a refusal is a 200 too, as the stock client expects. */
const x402Answer = <R>(response: R) => ({ statusCode: 200, body: response });

/**
 * POST /x402/verify: the seller's agent key; an x402 VerifyResponse (a refusal, a payment already
 * claimed included, is 200 isValid:false); a payment identifier used with another payment, 409.
 */
export const x402VerifyOperation = operation({
  route: 'x402-verify',
  needs: NEEDS.x402Verify,
  credentials: { kind: 'agentOrBearer', refusal: AUTH_MESSAGES.x402 },
  idempotency: 'none',
  body: { schema: facilitatorRequestSchema, plainJson: { checks: 'schema' } },
  run: async ({ caller: { agent }, body }) => x402Verify(await readOnlyFacilitator(), agent, body),
  render: (response: VerifyResponse) => x402Answer(response),
});

/**
 * POST /x402/settle: the seller's agent key; settles with the stock scheme and credits the agent's
 * USDC balance once per payment; an x402 SettleResponse (a refusal is 200 success:false).
 */
export const x402SettleOperation = operation({
  route: 'x402-settle',
  needs: NEEDS.x402Settle,
  credentials: { kind: 'agentOrBearer', refusal: AUTH_MESSAGES.x402 },
  idempotency: 'none',
  body: { schema: facilitatorRequestSchema, plainJson: { checks: 'schema' } },
  run: async ({ caller: { agent }, body }) => x402Settle(await signingFacilitator(), agent, body),
  render: x402Answer,
});

/** GET /x402/supported: public (a stock client's Bearer header is accepted and ignored); the kinds, signers. */
export const x402SupportedOperation = operation({
  route: 'x402-supported',
  needs: NEEDS.x402Supported,
  credentials: { kind: 'public' },
  idempotency: 'none',
  run: async () => x402Supported(await readOnlyFacilitator()),
  render: x402Answer,
});

/** GET /api/v1/agents/x402: the agent key; what the seller's x402 middleware is configured with, its seller memo included. */
export const x402SettingsOperation = operation({
  route: 'agent-x402-settings',
  needs: NEEDS.agentX402Settings,
  credentials: { kind: 'agentOrBearer', refusal: AUTH_MESSAGES.x402 },
  idempotency: 'none',
  links: true,
  run: async ({ caller: { agent }, baseUrl }) => x402Settings(await readOnlyFacilitator(), agent, baseUrl),
  render: x402Answer,
});
