/**
 * The hot-wallet signer function (lib/signer.ts): invoked synchronously by the money paths only
 * (lambda:InvokeFunction: the payout worker, the reconciler, x402 settle, the purchase routes and
 * the MCP server), never by API Gateway or an event source. Answers `{ok: true, value}`, or
 * `{ok: false, error}` for a refusal or an operator's problem (functions/rails/hot-wallet-signer.ts
 * rebuilds it on the caller's side); anything else fails the invocation, which the caller treats
 * as not decided.
 */
import * as z from 'zod';
import { loadConfig, NEEDS_SIGNER } from '../config';
import { X402UnavailableError } from '../core/x402';
import { withRequestContext } from '../observability/lambda-handler';
import { logger } from '../observability/logger';
import type { SignReply, SignRequest } from '../rails/hot-wallet-signer';
import { inProcessSigner } from './sign';

// Refuses to start without the chain's settings and the secret's ARN.
loadConfig({ require: NEEDS_SIGNER });

const requirementsSchema = z.looseObject({
  scheme: z.string(),
  network: z.string(),
  asset: z.string(),
  amount: z.string(),
  payTo: z.string(),
  maxTimeoutSeconds: z.number(),
  extra: z.looseObject({ feePayer: z.string(), memo: z.string().optional() }),
});

/** The shapes; what they must be is the signer's to check (./sign.ts). */
const requestSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('address') }),
  z.object({
    kind: z.literal('payout'),
    payout: z.object({ payoutId: z.string().min(1), destination: z.string(), netAmount: z.number(), createTokenAccount: z.boolean() }),
    message: z.base64(),
  }),
  z.object({ kind: z.literal('purchase'), requirements: requirementsSchema, signedAt: z.iso.datetime() }),
  z.object({
    kind: z.literal('x402-settlement'),
    payload: z.looseObject({ x402Version: z.number(), payload: z.record(z.string(), z.unknown()) }),
    requirements: requirementsSchema,
  }),
]);

/** Refusals and the operator's problems: answered, so the caller sees the same error (and its alarm fires). */
const ANSWERED = new Set([
  'UncheckedPayoutError',
  'UncheckedPurchaseError',
  'UncheckedPurchaseRequestError',
  'UncheckedSettlementError',
  'RailConfigError',
  'X402UnavailableError',
]);

export const handler = withRequestContext(async (event: unknown): Promise<SignReply> => {
  const parsed = requestSchema.safeParse(event);
  if (!parsed.success) return { ok: false, error: { name: 'UncheckedSignRequestError', message: 'not a sign request' } };
  const request = parsed.data as SignRequest;
  try {
    const value = await inProcessSigner().sign(request);
    // The audit trail of every signature: what was signed, never a key.
    if (request.kind !== 'address')
      logger().info('hot wallet signed', { kind: request.kind, ...describe(request), signature: signatureOf(value) });
    return { ok: true, value };
  } catch (error) {
    // X402UnavailableError is a Refusal by name (messages/refusal.ts): answered by its class's name.
    const name = error instanceof X402UnavailableError ? 'X402UnavailableError' : error instanceof Error ? error.name : '';
    if (!ANSWERED.has(name)) throw error;
    logger().warn('hot wallet refused to sign', {
      kind: request.kind,
      ...describe(request),
      error: { name, message: (error as Error).message },
    });
    return { ok: false, error: { name, message: (error as Error).message } };
  }
});

function describe(request: SignRequest): Record<string, unknown> {
  switch (request.kind) {
    case 'payout':
      return { payoutId: request.payout.payoutId, netAmount: request.payout.netAmount };
    case 'purchase':
      return { amount: request.requirements.amount, payTo: request.requirements.payTo };
    case 'x402-settlement':
      return { amount: request.requirements.amount };
    default:
      return {};
  }
}

const signatureOf = (value: unknown): unknown =>
  typeof value === 'string' ? value : (value as { authoritySignature?: unknown } | undefined)?.authoritySignature;
