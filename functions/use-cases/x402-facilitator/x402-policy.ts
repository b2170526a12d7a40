import type { PaymentPayload, PaymentRequirements, VerifyResponse } from '@x402/core/types';
import {
  isPaymentIdentifierExtension,
  isPaymentIdentifierRequired,
  isValidPaymentId,
  PAYMENT_IDENTIFIER,
} from '@x402/extensions/payment-identifier';
import { config } from '../../config';
import { serialize } from '../../contracts/json';
import type { FacilitatorRequest } from '../../contracts/x402';
import type { Agent } from '../../core/agents';
import { type Minor, parseAmount, unitsToMinor } from '../../core/money';
import {
  PaymentIdentifierConflictError,
  X402_REASONS,
  X402_SCHEME,
  X402_VERSION,
  type X402Settlement,
  x402SellerMemo,
} from '../../core/x402';
import { FACILITATOR_REFUSALS } from '../../messages/problems';
import { refuse } from '../../messages/refusal';
import { bindPaymentIdentifier } from '../../store/x402-facilitator/x402-payment-identifier.repository';
import type { Facilitator, Refusal, ServiceChecks } from '../../x402/facilitator';
import { fingerprint } from '../idempotency';

/** `GET /x402/supported`: the stock scheme's kinds and signers (the fee payer). */
export function x402Supported(facilitator: Facilitator) {
  return facilitator.supported();
}

/**
 * `GET /api/v1/agents/x402`: what a seller's middleware is configured with, `extra.memo` included
 * (the route's `accepts.extra`): the memo that names this agent as the seller of its payments.
 */
export function x402Settings(facilitator: Facilitator, agent: Agent, baseUrl: string) {
  const cfg = config();
  return {
    facilitatorUrl: `${baseUrl}/x402`,
    network: facilitator.network,
    asset: cfg.USDC_MINT ?? '',
    payTo: cfg.X402_PAY_TO ?? '',
    feePayer: facilitator.feePayer,
    extra: { memo: x402SellerMemo(agent.id) },
  };
}

/**
 * The service's policy on top of the scheme's checks: x402 v2, `exact`, our network, the treasury
 * as `payTo`, the USDC mint, an amount of at least X402_MIN_AMOUNT, and the authenticated agent's
 * seller memo (which the scheme then finds in the transaction). Returns the amount in micro-USDC,
 * or the refusal.
 */
export function checkPolicy(agent: Agent, request: FacilitatorRequest): { amount: Minor } | Refusal {
  const cfg = config();
  const req = request.paymentRequirements;
  if (request.x402Version !== X402_VERSION || request.paymentPayload.x402Version !== X402_VERSION) {
    return { reason: 'invalid_x402_version', message: FACILITATOR_REFUSALS.onlyVersion(X402_VERSION) };
  }
  if (req.scheme !== X402_SCHEME || request.paymentPayload.accepted.scheme !== X402_SCHEME) {
    return { reason: X402_REASONS.unsupportedScheme, message: FACILITATOR_REFUSALS.onlyExactScheme };
  }
  if (req.network !== cfg.X402_NETWORK)
    return { reason: X402_REASONS.networkMismatch, message: FACILITATOR_REFUSALS.networkMustBe(cfg.X402_NETWORK) };
  if (req.payTo !== cfg.X402_PAY_TO) return { reason: X402_REASONS.recipientMismatch, message: FACILITATOR_REFUSALS.payToMustBeTreasury };
  if (req.asset !== cfg.USDC_MINT) return { reason: X402_REASONS.mintMismatch, message: FACILITATOR_REFUSALS.assetMustBeUsdc };
  const memo = x402SellerMemo(agent.id);
  if (req.extra?.memo !== memo) {
    return {
      reason: X402_REASONS.sellerMemo,
      message: FACILITATOR_REFUSALS.sellerMemo(memo),
    };
  }
  if (!/^[1-9]\d*$/.test(req.amount)) return { reason: X402_REASONS.amountInvalid, message: FACILITATOR_REFUSALS.amountNotAtomicUnits };
  let amount: Minor;
  try {
    amount = parseAmount(`${req.amount}e-6`, 'USDC', unitsToMinor(cfg.MAX_AMOUNT, 'USDC'));
  } catch {
    return { reason: X402_REASONS.amountInvalid, message: FACILITATOR_REFUSALS.amountAboveMaximum(cfg.MAX_AMOUNT) };
  }
  const minimum = parseAmount(cfg.X402_MIN_AMOUNT, 'USDC', Number.MAX_SAFE_INTEGER);
  if (amount < minimum)
    return { reason: X402_REASONS.amountTooSmall, message: FACILITATOR_REFUSALS.amountBelowMinimum(cfg.X402_MIN_AMOUNT) };
  return { amount };
}

/** The policy as the facilitator's first check (it runs it again before admitting a message to be signed). */
export const policyChecks =
  (agent: Agent, request: FacilitatorRequest): ServiceChecks =>
  () => {
    const policy = checkPolicy(agent, request);
    return 'reason' in policy ? policy : undefined;
  };

export const asPayload = (request: FacilitatorRequest) => request.paymentPayload as unknown as PaymentPayload;
export const asRequirements = (request: FacilitatorRequest) => request.paymentRequirements as unknown as PaymentRequirements;

/** A claimed payment refused by verify: the stock middleware would serve the resource again for money that cannot pay again. */
export function claimedRefusal(existing: X402Settlement, agent: Agent): VerifyResponse {
  const state =
    existing.agentId !== agent.id
      ? 'this payment was claimed by another agent'
      : existing.status === 'PENDING'
        ? 'this payment is being settled'
        : existing.status === 'FAILED'
          ? 'this payment failed on chain'
          : 'this payment was settled already';
  return { isValid: false, invalidReason: X402_REASONS.settledByAnotherAgent, invalidMessage: state, payer: existing.payer };
}

/**
 * The payload's `payment-identifier` (x402 extension), or undefined when it carries none; a
 * malformed one, or none where the echoed declaration says `required: true`, is a 400.
 * Read with the extension's helpers that do not compile the payload's `schema`:
 * `validatePaymentIdentifier` (and `extractAndValidatePaymentIdentifier`) compile the buyer's JSON
 * schema with ajv on every call, and a buyer's `pattern` such as `^(a|a)+$` then backtracks for
 * minutes on a 31-character id (tried: docs/x402.md).
 */
export function paymentIdentifierOf(request: FacilitatorRequest): string | undefined {
  const extension = request.paymentPayload.extensions?.[PAYMENT_IDENTIFIER];
  if (extension === undefined) return undefined;
  const field = `paymentPayload.extensions.${PAYMENT_IDENTIFIER}`;
  if (!isPaymentIdentifierExtension(extension)) throw refuse('paymentIdentifierRequiredFlagInvalid', field);
  const id: unknown = extension.info.id;
  if (id === undefined) {
    if (isPaymentIdentifierRequired(extension)) throw refuse('paymentIdentifierMissing', field);
    return undefined;
  }
  if (typeof id !== 'string' || !isValidPaymentId(id)) throw refuse('paymentIdentifierInvalid', field);
  return id;
}

/**
 * What makes two requests with one identifier the same payment (the extension's "request binding"):
 * the buyer's transaction, and the requirements it pays (scheme, network, asset, amount, payTo, the
 * seller's memo, the fee payer) for the resource.
 */
function paymentFingerprint(request: FacilitatorRequest): string {
  const req = request.paymentRequirements;
  const transaction = request.paymentPayload.payload.transaction;
  return fingerprint({
    payload: typeof transaction === 'string' ? transaction : serialize(request.paymentPayload.payload),
    scheme: req.scheme,
    network: req.network,
    asset: req.asset,
    amount: req.amount,
    payTo: req.payTo,
    memo: String(req.extra?.memo ?? ''),
    feePayer: String(req.extra?.feePayer ?? ''),
    resource: request.paymentPayload.resource?.url ?? '',
  });
}

/** Binds the identifier to this payment for this agent, or finds it bound: to another payment, 409. */
export async function bindIdentifier(agent: Agent, id: string, request: FacilitatorRequest, now: Date) {
  const fp = paymentFingerprint(request);
  const binding = await bindPaymentIdentifier(agent.id, id, fp, now);
  if (binding.fingerprint !== fp) throw new PaymentIdentifierConflictError();
  return { fingerprint: fp, verifyResponse: binding.verifyResponse };
}
