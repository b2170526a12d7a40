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
 */

import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from '@x402/core/types';
import {
  isPaymentIdentifierExtension,
  isPaymentIdentifierRequired,
  isValidPaymentId,
  PAYMENT_IDENTIFIER,
} from '@x402/extensions/payment-identifier';
import { LosslessNumber } from 'lossless-json';
import { config } from '../config';
import type { ApiResult } from '../contracts/api';
import { serialize } from '../contracts/json';
import type { FacilitatorRequest } from '../contracts/x402';
import type { Agent } from '../core/agents';
import { TransferCreditedElsewhereError } from '../core/chain-credits';
import { AgentDisabledError, BalanceLimitError } from '../core/errors';
import { newEventId, type OutboxEvent } from '../core/events';
import { formatAmount, type Minor, parseAmount, unitsToMinor } from '../core/money';
import {
  newX402PaymentId,
  PaymentIdentifierConflictError,
  SettlementClaimedError,
  SettlementNotPendingError,
  X402_REASONS,
  X402_SCHEME,
  X402_VERSION,
  type X402Payment,
  type X402PaymentRecord,
  type X402Settlement,
  x402SellerMemo,
} from '../core/x402';
import { FACILITATOR_REFUSALS } from '../messages/problems';
import { refuse } from '../messages/refusal';
import { logger } from '../observability/logger';
import {
  TRANSFER_CREDITED_ELSEWHERE_LOG_MESSAGE,
  X402_BALANCE_LIMIT_LOG_MESSAGE,
  X402_FEE_PAYER_LAMPORTS_METRIC,
  X402_FINALITY_MISMATCH_LOG_MESSAGE,
} from '../observability/metric-names';
import { metrics } from '../observability/metrics';
import {
  claimSettlement,
  creditSettlement,
  deferPendingSettlement,
  endFinalityCheck,
  failSettlement,
  getSettlement,
  listStalePendingSettlements,
  listUnfinalizedSettlements,
  listX402Payments,
} from '../store/x402.repository';
import { bindPaymentIdentifier, keepFirstVerify } from '../store/x402-payment-identifier.repository';
import type { Facilitator, Refusal, ServiceChecks } from '../x402/facilitator';
import { AUTH_MESSAGES, forgetAgent, requireCurrentAgent } from './auth';
import { fingerprint, idempotentCommand } from './idempotency';

type SettleResult = Awaited<ReturnType<typeof idempotentCommand>>;

/** The stock scheme's reason for a send the RPC answered with an error: the transaction may still land. */
const STOCK_SEND_FAILED = 'invalid_exact_svm_transaction_failed';

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
function checkPolicy(agent: Agent, request: FacilitatorRequest): { amount: Minor } | Refusal {
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
const policyChecks =
  (agent: Agent, request: FacilitatorRequest): ServiceChecks =>
  () => {
    const policy = checkPolicy(agent, request);
    return 'reason' in policy ? policy : undefined;
  };

const asPayload = (request: FacilitatorRequest) => request.paymentPayload as unknown as PaymentPayload;
const asRequirements = (request: FacilitatorRequest) => request.paymentRequirements as unknown as PaymentRequirements;

/** A claimed payment refused by verify: the stock middleware would serve the resource again for money that cannot pay again. */
function claimedRefusal(existing: X402Settlement, agent: Agent): VerifyResponse {
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
function paymentIdentifierOf(request: FacilitatorRequest): string | undefined {
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
async function bindIdentifier(agent: Agent, id: string, request: FacilitatorRequest, now: Date) {
  const fp = paymentFingerprint(request);
  const binding = await bindPaymentIdentifier(agent.id, id, fp, now);
  if (binding.fingerprint !== fp) throw new PaymentIdentifierConflictError();
  return { fingerprint: fp, verifyResponse: binding.verifyResponse };
}

const replayed = (rawBody: string): ApiResult => ({ statusCode: 200, rawBody, headers: { 'idempotent-replayed': 'true' } });

/**
 * `POST /x402/verify` for `agent`: the policy (its seller memo included), a payment already claimed
 * refused (found by its message hash: verify holds no key), then the stock scheme's verification
 * (which simulates). Verify never claims, signs or credits. With a `payment-identifier`, the first
 * verify answer for it is kept and every later verify of the same payment with it answers that
 * (`Idempotent-Replayed: true`); another payment with it is a 409.
 */
export async function x402Verify(facilitator: Facilitator, agent: Agent, request: FacilitatorRequest): Promise<ApiResult> {
  const identifier = paymentIdentifierOf(request);
  const policy = checkPolicy(agent, request);
  // A refusal of the policy is decided before anything runs: not kept for the identifier.
  if ('reason' in policy) {
    return { statusCode: 200, body: { isValid: false, invalidReason: policy.reason, invalidMessage: policy.message, payer: '' } };
  }
  if (identifier === undefined) return { statusCode: 200, body: await verifyPayment(facilitator, agent, request) };
  const now = new Date();
  const binding = await bindIdentifier(agent, identifier, request, now);
  if (binding.verifyResponse !== undefined) return replayed(binding.verifyResponse);
  const answer = serialize(await verifyPayment(facilitator, agent, request));
  const kept = await keepFirstVerify(agent.id, identifier, binding.fingerprint, answer, now);
  return kept === answer ? { statusCode: 200, rawBody: answer } : replayed(kept);
}

async function verifyPayment(facilitator: Facilitator, agent: Agent, request: FacilitatorRequest): Promise<VerifyResponse> {
  const payload = asPayload(request);
  const messageHash = facilitator.messageHash(payload);
  const existing = messageHash ? await getSettlement(messageHash) : undefined;
  if (existing) return claimedRefusal(existing, agent);
  return facilitator.verify(payload, asRequirements(request), policyChecks(agent, request));
}

/** A failed SettleResponse in the shape the stock client requires (`transaction` "" when nothing was sent). */
function settleFailure(network: string, reason: string, message?: string, payer = '', transaction = ''): SettleResult {
  const body: SettleResponse = {
    success: false,
    errorReason: reason,
    ...(message ? { errorMessage: message } : {}),
    payer,
    transaction,
    network: network as SettleResponse['network'],
  };
  return { statusCode: 200, body };
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
export async function x402Settle(facilitator: Facilitator, agent: Agent, request: FacilitatorRequest): Promise<SettleResult> {
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
): Promise<SettleResult> {
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
async function failed(settlement: X402Settlement, error: string): Promise<SettleResult> {
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
): Promise<SettleResult> {
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
  return { statusCode: 200, body: { ...response, transaction: '', payer } };
}

/**
 * What a landed transaction cost the fee payer, once per transaction: at the one transition that
 * ends its settlement (credited, or failed on chain), for the X402FeePayerSpend alarm.
 */
function recordFee(settlement: X402Settlement): void {
  if (settlement.feeLamports !== undefined) metrics().addMetric(X402_FEE_PAYER_LAMPORTS_METRIC, MetricUnit.Count, settlement.feeLamports);
}

function successResponse(s: X402Settlement): SettleResponse {
  return { success: true, transaction: s.signature, network: s.network as SettleResponse['network'], payer: s.payer };
}

/** The first SettleResponse of a credited settlement, answered again (nothing credited). */
function answerCredited(s: X402Settlement): SettleResult {
  return { statusCode: 200, rawBody: s.response ?? JSON.stringify(successResponse(s)), headers: { 'idempotent-replayed': 'true' } };
}

/**
 * What the one credit path did, for a caller that counts it (the reconciler's report) without
 * reading the answer: `credited`, this call's transaction credited the agent; `alreadyCredited`,
 * credited before (by a racing settle or reconciler run: the first answer, nothing credited);
 * `heldAtLimit`, confirmed but the agent's USDC shards are at their cap, so the settlement stays
 * PENDING for the next reconciler run; `notPending`, it became FAILED in between.
 */
export type CreditOutcome = 'credited' | 'alreadyCredited' | 'heldAtLimit' | 'notPending';

/** What the credit path did, and the SettleResponse settle answers with (the outcome never changes it). */
export interface Credit {
  outcome: CreditOutcome;
  result: SettleResult;
}

/**
 * The one credit path: a confirmed transaction's amount to the claiming agent's USDC balance, with
 * the payment record, the event and the idempotency record (scope the agent's x402 settles, key
 * the signature), in one transaction conditioned on the claim still being PENDING. Called by
 * settle, by a retry of it and by the reconciler: whichever comes second credits nothing.
 *
 * Settle passes the key it was asked with (`agentKeyHash`): its credit then also carries the agent
 * item's kill switch (enabled, and still this key's), as a withdrawal does, for an agent disabled
 * or a key rotated away since settle read the item before signing. Refused, it is 401 `invalid or
 * disabled agent key` and the claim stays PENDING: the transaction is on chain and the money in the
 * treasury, so the reconciler (which holds no key and checks none) credits it to the claiming agent
 * later, where the kill switch keeps it from being spent while the agent is disabled.
 */
export async function creditConfirmed(settlement: X402Settlement, response: SettleResponse, agentKeyHash?: string): Promise<Credit> {
  // Set by the attempt that decides; a stored answer replayed by idempotentCommand (no attempt
  // returns) is a credit made before.
  let outcome: CreditOutcome = 'alreadyCredited';
  const result = await idempotentCommand(
    {
      scope: `${settlement.agentId}#x402-settle`,
      key: settlement.signature,
      request: { signature: settlement.signature, amount: settlement.amount, network: settlement.network },
      rounds: 3,
      render: (settled: SettleResponse) => ({ statusCode: 200, body: settled }),
    },
    async ({ now, answer }) => {
      const record: X402PaymentRecord = {
        id: newX402PaymentId(now),
        agentId: settlement.agentId,
        amount: settlement.amount,
        payer: settlement.payer,
        transaction: settlement.signature,
        network: settlement.network,
        resource: settlement.resource,
        createdAt: now.toISOString(),
      };
      const { result, record: idempotency } = answer(response);
      try {
        await creditSettlement({
          settlement,
          record,
          response: result.rawBody ?? JSON.stringify(response),
          idempotency,
          events: [settledEvent(record, now)],
          now,
          ...(agentKeyHash === undefined ? {} : { agentKeyHash }),
        });
      } catch (error) {
        if (error instanceof AgentDisabledError && agentKeyHash !== undefined) {
          forgetAgent(agentKeyHash);
          throw refuse(AUTH_MESSAGES.x402);
        }
        if (error instanceof SettlementNotPendingError) {
          // Credited (or failed) in between, by a racing settle or the reconciler: answer what it recorded.
          const current = await getSettlement(settlement.messageHash);
          if (current?.status === 'CREDITED' && current.agentId === settlement.agentId) {
            outcome = 'alreadyCredited';
            return answerCredited(current);
          }
          outcome = 'notPending';
          return settleFailure(settlement.network, X402_REASONS.failedBefore, current?.failure, settlement.payer, settlement.signature);
        }
        if (error instanceof TransferCreditedElsewhereError) {
          // A top-up was credited with this very transaction (store/chain-credit.ts): the money is
          // accounted for, so this credit never happens and the settlement ends.
          outcome = 'notPending';
          await failSettlement(settlement.messageHash, error.message, now);
          logger().error(TRANSFER_CREDITED_ELSEWHERE_LOG_MESSAGE, {
            rail: 'x402',
            signature: settlement.signature,
            agentId: settlement.agentId,
          });
          return settleFailure(
            settlement.network,
            X402_REASONS.settledByAnotherAgent,
            error.message,
            settlement.payer,
            settlement.signature,
          );
        }
        if (error instanceof BalanceLimitError) {
          // The money is in the treasury and owed to the agent; the claim stays PENDING and each
          // reconciler run tries the credit again (reconcileX402), logging this ERROR each time:
          // the X402CreditHeldAtLimit alarm counts it (lib/monitoring.ts) until the agent withdraws.
          outcome = 'heldAtLimit';
          logger().error(X402_BALANCE_LIMIT_LOG_MESSAGE, {
            signature: settlement.signature,
            messageHash: settlement.messageHash,
            agentId: settlement.agentId,
            amount: formatAmount(settlement.amount, 'USDC'),
          });
          return settleFailure(settlement.network, X402_REASONS.pending, 'balance limit reached; the credit is retried');
        }
        throw error;
      }
      outcome = 'credited';
      recordFee(settlement);
      logger().info('x402 payment credited', { signature: settlement.signature, agentId: settlement.agentId, amount: settlement.amount });
      return result;
    },
  );
  return { outcome, result };
}

function paymentView(record: X402PaymentRecord) {
  return {
    id: record.id,
    amount: new LosslessNumber(formatAmount(record.amount, 'USDC')),
    currency: 'USDC' as const,
    payer: record.payer,
    transaction: record.transaction,
    network: record.network,
    resource: record.resource,
    createdAt: record.createdAt,
  };
}

function settledEvent(record: X402PaymentRecord, now: Date): OutboxEvent {
  return {
    id: newEventId(now),
    type: 'x402.payment.settled',
    createdAt: now.toISOString(),
    owner: { kind: 'agent', id: record.agentId },
    data: paymentView(record),
  };
}

/** `GET /api/v1/agents/x402/payments`: one page, newest first; `lastId` when there is another. */
export async function listAgentX402Payments(agentId: string, page: { limit: number; after?: string }) {
  const { payments, lastId } = await listX402Payments(agentId, page);
  return { data: payments.map(paymentView), lastId };
}

export interface X402ReconcileReport {
  /** Credited by this run. */
  credited: number;
  /** Confirmed on chain, but the agent's balance is at its cap: still PENDING, tried again next run. */
  heldAtLimit: number;
  failed: number;
  stillPending: number;
  /** The run's deadline came first: the settlements it did not look at are the next run's. */
  outOfTime?: true;
}

/** How much of its list one reconciler sweep takes: at most `limit` (100), and nothing new after `deadline` (epoch ms). */
export interface SweepLimits {
  limit?: number;
  deadline?: number;
}

const pastDeadline = (limits: SweepLimits): boolean => limits.deadline !== undefined && Date.now() >= limits.deadline;

/**
 * The reconciler's x402 sweep: every settlement still PENDING after X402_RECONCILE_AFTER_SECONDS
 * (its settle died, or is taking very long) is looked up on chain:
 *   - confirmed → credited through the one credit path. One the agent's balance cap refuses stays
 *     PENDING and is counted as `heldAtLimit`, not `credited`; each refusal logs the ERROR line the
 *     X402CreditHeldAtLimit alarm counts. One credited by a racing settle between the listing and
 *     the credit is counted in neither;
 *   - failed → FAILED;
 *   - not seen → left (the buyer's transaction may never be sent, and then nothing is owed; one that
 *     lands later is credited by a later run), counted only in the report (`stillPending`): no
 *     alarm watches them, as a claim on a transaction that never landed owes nothing.
 * A settlement left PENDING (held, or not seen) goes to the back of the list and is taken again
 * once it is stale again (`deferPendingSettlement`), so the `limit` oldest that never resolve
 * cannot fill every run and starve newer ones. What the reconciler alarms on for x402 is the second
 * look below: the X402FinalityMismatch alarm (lib/monitoring.ts, X402_FINALITY_MISMATCHES_METRIC).
 */
export async function reconcileX402(
  facilitator: Facilitator,
  now: Date = new Date(),
  limits: SweepLimits = {},
): Promise<X402ReconcileReport> {
  const before = new Date(now.getTime() - config().X402_RECONCILE_AFTER_SECONDS * 1000);
  const report: X402ReconcileReport = { credited: 0, heldAtLimit: 0, failed: 0, stillPending: 0 };
  for (const settlement of await listStalePendingSettlements(before, limits.limit ?? 100)) {
    // Not looked at, it keeps its place at the front of the list for the next run.
    if (pastDeadline(limits)) {
      report.outOfTime = true;
      break;
    }
    const status = await facilitator.chainStatus(settlement.signature);
    if (status.kind === 'confirmed') {
      const { outcome } = await creditConfirmed(settlement, successResponse(settlement));
      if (outcome === 'credited') report.credited += 1;
      else if (outcome === 'heldAtLimit') {
        report.heldAtLimit += 1;
        await deferPendingSettlement(settlement, now);
      }
    } else if (status.kind === 'failed') {
      if (await failSettlement(settlement.messageHash, status.error, now)) {
        report.failed += 1;
        recordFee(settlement);
      }
    } else {
      report.stillPending += 1;
      await deferPendingSettlement(settlement, now);
    }
  }
  return report;
}

export interface X402FinalityReport {
  finalized: number;
  mismatched: number;
  waiting: number;
  /** The run's deadline came first: the settlements it did not look at are the next run's. */
  outOfTime?: true;
}

/**
 * The reconciler's second look (DESIGN §17): settle credits at `confirmed`, and every credited
 * settlement is checked again at `finalized` once X402_FINALITY_AFTER_SECONDS old. Finalized → off
 * the list. Failed on chain, or still not finalized X402_FINALITY_MAX_SECONDS after the credit (the
 * fork it was confirmed on was dropped) → a mismatch: off the list with what the chain said, and an
 * ERROR line the X402FinalityMismatch alarm counts. Nothing is debited automatically: the credit
 * may already be withdrawn, and an operator decides (docs/x402.md).
 */
export async function checkX402Finality(
  facilitator: Facilitator,
  now: Date = new Date(),
  limits: SweepLimits = {},
): Promise<X402FinalityReport> {
  const cfg = config();
  const report: X402FinalityReport = { finalized: 0, mismatched: 0, waiting: 0 };
  const before = new Date(now.getTime() - cfg.X402_FINALITY_AFTER_SECONDS * 1000);
  for (const settlement of await listUnfinalizedSettlements(before, limits.limit ?? 100)) {
    if (pastDeadline(limits)) {
      report.outOfTime = true;
      break;
    }
    const status = await facilitator.chainStatus(settlement.signature);
    if (status.kind === 'confirmed' && status.finalized) {
      if (await endFinalityCheck(settlement.messageHash, { finalized: true }, now)) report.finalized += 1;
      continue;
    }
    const age = now.getTime() - Date.parse(settlement.creditedAt ?? settlement.createdAt);
    const mismatch =
      status.kind === 'failed'
        ? `failed on chain: ${status.error}`
        : age > cfg.X402_FINALITY_MAX_SECONDS * 1000
          ? `not finalized ${Math.round(age / 1000)} s after the credit (${status.kind === 'confirmed' ? 'still confirmed' : 'not found'})`
          : undefined;
    if (mismatch === undefined) {
      report.waiting += 1;
      continue;
    }
    if (await endFinalityCheck(settlement.messageHash, { mismatch }, now)) {
      report.mismatched += 1;
      logger().error(X402_FINALITY_MISMATCH_LOG_MESSAGE, {
        signature: settlement.signature,
        agentId: settlement.agentId,
        paymentId: settlement.paymentId,
        amount: formatAmount(settlement.amount as Minor, 'USDC'),
        mismatch,
      });
    }
  }
  return report;
}
