/**
 * What the x402 facilitator routes share as an adapter: the seller's agent key as `x-agent-key` or
 * `Authorization: Bearer ag_live_…` (what a stock x402 middleware's `createAuthHeaders` sends), and
 * the JSON body read as plain JSON (the x402 wire format has no money in JSON numbers: amounts are
 * strings of atomic units), validated against the contract's schema.
 */
import { stringify } from 'lossless-json';
import * as z from 'zod';
import type { ApiRequest } from '../contracts/api';
import { validate } from '../contracts/validation';
import { type FacilitatorRequest, facilitatorRequestSchema } from '../contracts/x402';
import type { Agent } from '../core/agents';
import { parseJsonBody } from '../http/body';
import { AUTH_MESSAGES, authenticate } from '../use-cases/auth';

const BEARER = /^Bearer\s+(\S+)\s*$/i;
const anyObject = z.record(z.string(), z.unknown());

/** The seller agent behind `x-agent-key` or a Bearer agent key; 401 `invalid or disabled agent key`. */
export async function authenticateX402Agent(req: ApiRequest): Promise<Agent> {
  const key = req.headers['x-agent-key'] ?? BEARER.exec(req.headers.authorization ?? '')?.[1];
  const { agent } = await authenticate({ ...req, headers: { ...req.headers, 'x-agent-key': key } }, AUTH_MESSAGES.x402, false);
  return agent;
}

/** `{x402Version, paymentPayload, paymentRequirements}`: 400 with the first problem otherwise. */
export function facilitatorRequest(req: ApiRequest): FacilitatorRequest {
  const body = parseJsonBody(req, anyObject);
  return validate(facilitatorRequestSchema, JSON.parse(stringify(body) ?? '{}'));
}
