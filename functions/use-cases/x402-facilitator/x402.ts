/**
 * x402 facilitator for the service's agents (DESIGN §17, docs/x402.md). The stock `exact` scheme
 * (functions/x402/facilitator.ts) checks and settles the transaction; this adds what makes the
 * payment the agent's money: the service's own policy (the treasury as `payTo`, the USDC mint, the
 * network, X402_MIN_AMOUNT, the authenticated agent's seller memo), and the credit, once per payment.
 *
 * The hot wallet signs only what passed every check. Settle runs, in this order: the policy; the
 * payment's claim looked up by its message hash (a payment claimed before is answered from its
 * claim, never verified or signed again to answer); every check (the policy again, then the stock
 * scheme's verify, which simulates with sigVerify off and needs no signature); only then the fee
 * payer's signature, through the facilitator's verified-message gate, which refuses to sign a
 * message no verification in this process passed. So no signature of an unchecked transaction
 * exists: not in the table, an answer, a log line or an RPC request.
 *
 * Exactly once, crash included: the agent's PENDING claim is written after every check and BEFORE
 * the transaction is sent. It is keyed by the transaction's message hash (one message is one
 * payment: it names the fee payer, and only the hot wallet's deterministic signature lands it, under
 * one signature) and it stores that signature, so a retry of the same settle, or the reconciler
 * (`reconcileX402`, which holds no key), can ask the chain about it. Whatever dies after the claim
 * (the send, the confirmation wait, the credit), either finds the claim, asks the chain, and credits
 * a confirmed transaction through the one credit path (`creditConfirmed`): one transaction with its
 * idempotency record, conditioned on the claim still being PENDING. A claim is never given up:
 * once written, its transaction may be on its way, and only the chain ends it.
 *
 * The signature the claim stores is that of a transaction that passed every check. Whoever reads it
 * (the table, its stream, a backup, the RPC provider's logs) and also holds the buyer's signed
 * transaction can land exactly that transaction, before its blockhash expires: the transfer of the
 * price from the buyer to the treasury, carrying the seller's memo, for a fee within the caps. That
 * is the payment the service was about to land, and its PENDING claim credits it to its seller when
 * it does (settle's retry or the reconciler). It cannot move anything else, the hot wallet's USDC or
 * SOL beyond that fee included: the signature covers the message, and the message passed the checks.
 *
 * Here: verify and settle, answering outcomes (a Verify/SettleResponse, or the first answer as it
 * was sent: a StoredReply). Beside it, by job: the policy, settings and payment identifiers
 * (x402-policy.ts), the one credit path (x402-credit.ts), the reconciler's sweeps (x402-reconcile.ts).
 */

import type { PaymentPayload, PaymentRequirements, VerifyResponse } from '@x402/core/types';
import { StoredReply } from '../../contracts/api';
import { serialize } from '../../contracts/json';
import type { FacilitatorRequest } from '../../contracts/x402';
import type { Agent } from '../../core/agents';
import { SettlementClaimedError, X402_REASONS, type X402Payment, type X402Settlement } from '../../core/x402';
import { claimSettlement, failSettlement, getSettlement } from '../../store/x402-facilitator/x402.repository';
import { keepFirstVerify } from '../../store/x402-facilitator/x402-payment-identifier.repository';
import type { Facilitator, ServiceChecks } from '../../x402/facilitator';
import { AUTH_MESSAGES, requireCurrentAgent } from '../auth';
import { answerCredited, creditConfirmed, recordFee, type SettleAnswer, settleFailure, successResponse } from './x402-credit';
import { asPayload, asRequirements, bindIdentifier, checkPolicy, claimedRefusal, paymentIdentifierOf, policyChecks } from './x402-policy';

/** The stock scheme's reason for a send the RPC answered with an error: the transaction may still land. */
const STOCK_SEND_FAILED = 'invalid_exact_svm_transaction_failed';

/**
 * What verify answers: a VerifyResponse (200, its JSON), or the first answer kept for its payment
 * identifier, as it was sent (200, `Idempotent-Replayed: true`).
 */
export type VerifyAnswer = VerifyResponse | StoredReply;

/**
 * `POST /x402/verify` for `agent`: the policy (its seller memo included), a payment already claimed
 * refused (found by its message hash: verify holds no key), then the stock scheme's verification
 * (which simulates). Verify never claims, signs or credits. With a `payment-identifier`, the first
 * verify answer for it is kept and every later verify of the same payment with it answers that
 * (`Idempotent-Replayed: true`); another payment with it is a 409.
 */
export async function x402Verify(facilitator: Facilitator, agent: Agent, request: FacilitatorRequest): Promise<VerifyAnswer> {
  const identifier = paymentIdentifierOf(request);
  const policy = checkPolicy(agent, request);
  // A refusal of the policy is decided before anything runs: not kept for the identifier.
  if ('reason' in policy) return { isValid: false, invalidReason: policy.reason, invalidMessage: policy.message, payer: '' };
  if (identifier === undefined) return verifyPayment(facilitator, agent, request);
  const now = new Date();
  const binding = await bindIdentifier(agent, identifier, request, now);
  if (binding.verifyResponse !== undefined) return new StoredReply(200, binding.verifyResponse);
  const response = await verifyPayment(facilitator, agent, request);
  const answer = serialize(response);
  const kept = await keepFirstVerify(agent.id, identifier, binding.fingerprint, answer, now);
  return kept === answer ? response : new StoredReply(200, kept);
}

async function verifyPayment(facilitator: Facilitator, agent: Agent, request: FacilitatorRequest): Promise<VerifyResponse> {
  const payload = asPayload(request);
  const messageHash = facilitator.messageHash(payload);
  const existing = messageHash ? await getSettlement(messageHash) : undefined;
  if (existing) return claimedRefusal(existing, agent);
  return facilitator.verify(payload, asRequirements(request), policyChecks(agent, request));
}

/**
 * `POST /x402/settle` for `agent`: the policy, the claim looked up, every check, the fee payer's
 * signature (of the checked transaction only), the claim, the stock scheme's settle (verify again,
 * sign, send, confirm), then the credit. The same payload settled again by the same agent answers
 * the first SettleResponse and credits nothing; by another agent, `success:false`. A
 * `payment-identifier` is bound to its payment before anything else runs: another payment with it
 * is a 409, before any check, signature, claim or credit; the same one goes on, and its claim
 * answers it as any retry (the money's path is the one it always was).
 */
export async function x402Settle(facilitator: Facilitator, agent: Agent, request: FacilitatorRequest): Promise<SettleAnswer> {
  const network = request.paymentRequirements.network;
  const identifier = paymentIdentifierOf(request);
  const policy = checkPolicy(agent, request);
  if ('reason' in policy) return settleFailure(network, policy.reason, policy.message);
  // The hot wallet signs nothing for a seller the cache remembers but its item no longer says is enabled.
  await requireCurrentAgent(agent, AUTH_MESSAGES.x402);
  if (identifier !== undefined) await bindIdentifier(agent, identifier, request, new Date());
  const payload = asPayload(request);
  const requirements = asRequirements(request);
  const checks = policyChecks(agent, request);
  const messageHash = facilitator.messageHash(payload);
  const existing = messageHash ? await getSettlement(messageHash) : undefined;
  if (existing) return settleClaimed(facilitator, agent, existing, payload, requirements, checks);

  const verdict = await facilitator.verify(payload, requirements, checks);
  // Refused: nothing signed, nothing claimed; a corrected request may follow.
  if (!verdict.isValid)
    return settleFailure(network, verdict.invalidReason ?? 'invalid_payment', verdict.invalidMessage, verdict.payer ?? '');
  // The scheme decoded it to pass it, so it has a message hash.
  if (!messageHash) throw new Error('a verified x402 payment has no transaction message');
  const payment: X402Payment = {
    messageHash,
    // Signed now, in this process, because every check passed: the gate refuses any other message.
    signature: await facilitator.signatureOf(payload),
    agentId: agent.id,
    amount: policy.amount,
    payer: verdict.payer || facilitator.payerOf(payload),
    network,
    resource: request.paymentPayload.resource?.url ?? null,
    ...optionalFee(facilitator.feeOf(payload)),
  };
  let settlement: X402Settlement;
  try {
    settlement = await claimSettlement(payment, new Date());
  } catch (error) {
    if (!(error instanceof SettlementClaimedError)) throw error;
    return settleClaimed(facilitator, agent, error.existing, payload, requirements, checks);
  }
  return sendAndCredit(facilitator, agent, settlement, payload, requirements, checks);
}

const optionalFee = (fee: number | undefined) => (fee === undefined ? {} : { feeLamports: fee });

/** A payment claimed before: another agent's is refused; this agent's is answered or finished. */
async function settleClaimed(
  facilitator: Facilitator,
  agent: Agent,
  existing: X402Settlement,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
  checks: ServiceChecks,
): Promise<SettleAnswer> {
  if (existing.agentId !== agent.id) {
    return settleFailure(existing.network, X402_REASONS.settledByAnotherAgent, 'this payment was settled for another agent');
  }
  if (existing.status === 'CREDITED') return answerCredited(existing);
  if (existing.status === 'FAILED') {
    return settleFailure(existing.network, X402_REASONS.failedBefore, existing.failure, existing.payer, existing.signature);
  }
  // This agent's PENDING claim: a settle that died, or one still running. The chain says which.
  const status = await facilitator.chainStatus(existing.signature);
  if (status.kind === 'confirmed') return (await creditConfirmed(existing, successResponse(existing), agent.keyHash)).result;
  if (status.kind === 'failed') return failed(existing, status.error);
  // Never seen on chain: checked again and sent (the same signed bytes; a duplicate send lands once).
  return sendAndCredit(facilitator, agent, existing, payload, requirements, checks);
}

/** PENDING → FAILED for a transaction that failed on chain (its fee was paid), answered `transaction_failed`. */
async function failed(settlement: X402Settlement, error: string): Promise<SettleAnswer> {
  if (await failSettlement(settlement.messageHash, error, new Date())) recordFee(settlement);
  return settleFailure(settlement.network, X402_REASONS.failedBefore, error, settlement.payer, settlement.signature);
}

/**
 * The stock scheme settles (checking the payment again first); a confirmed transaction is credited.
 * Whatever else it answers, the chain says what became of the transaction, and the claim stays
 * PENDING unless the chain ended it: a send the RPC answered with an error may still land, and a
 * retry of this settle or the reconciler credits it when it does.
 */
async function sendAndCredit(
  facilitator: Facilitator,
  agent: Agent,
  settlement: X402Settlement,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
  checks: ServiceChecks,
): Promise<SettleAnswer> {
  const response = await facilitator.settle(payload, requirements, checks);
  const payer = response.payer || settlement.payer;
  const landed = { ...settlement, payer };
  if (response.success)
    return (await creditConfirmed(landed, { ...response, transaction: settlement.signature, payer }, agent.keyHash)).result;
  const status = await facilitator.chainStatus(settlement.signature);
  if (status.kind === 'confirmed') return (await creditConfirmed(landed, successResponse(landed), agent.keyHash)).result;
  if (status.kind === 'failed') return failed(landed, status.error);
  if (response.transaction || response.errorReason === STOCK_SEND_FAILED || response.errorReason === X402_REASONS.settledByAnotherAgent) {
    // Sent and not confirmed yet, a send whose outcome is unknown, or (the scheme's in-container
    // duplicate guard) another settle of it in flight here: ask again.
    return settleFailure(settlement.network, X402_REASONS.pending, 'this payment is being settled; ask again', payer, response.transaction);
  }
  // Refused by the scheme's checks before anything was sent (the buyer's funds moved since the
  // check that admitted it, say): the refusal is the answer. The claim stays PENDING: a retry of this
  // payment checks it again and sends it if it passes, and should the checked transaction land
  // anyway (sent by whoever holds its stored signature and the buyer's bytes), it is credited.
  return { ...response, transaction: '', payer };
}
