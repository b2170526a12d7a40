/**
 * The one credit path of the x402 facilitator (DESIGN §17): a confirmed transaction's amount to the
 * claiming agent's USDC balance, once, whoever asks (settle, a retry of it, the reconciler), and
 * the SettleResponses every path answers with; the agent's credited payments as listed.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SettleResponse } from '@x402/core/types';
import { LosslessNumber } from 'lossless-json';
import { StoredReply } from '../../contracts/api';
import { serialize } from '../../contracts/json';
import { TransferCreditedElsewhereError } from '../../core/chain-credits';
import { AgentDisabledError, BalanceLimitError } from '../../core/errors';
import { newEventId, type OutboxEvent } from '../../core/events';
import { formatAmount } from '../../core/money';
import { newX402PaymentId, SettlementNotPendingError, X402_REASONS, type X402PaymentRecord, type X402Settlement } from '../../core/x402';
import { refuse } from '../../messages/refusal';
import { logger } from '../../observability/logger';
import {
  TRANSFER_CREDITED_ELSEWHERE_LOG_MESSAGE,
  X402_BALANCE_LIMIT_LOG_MESSAGE,
  X402_FEE_PAYER_LAMPORTS_METRIC,
} from '../../observability/metric-names';
import { metrics } from '../../observability/metrics';
import { creditSettlement, failSettlement, getSettlement, listX402Payments } from '../../store/x402-facilitator/x402.repository';
import { AUTH_MESSAGES, forgetAgent } from '../auth';
import { idempotent } from '../idempotency';

/**
 * What settle answers (and the credit path with it): a SettleResponse (200, its JSON), or the first
 * SettleResponse of a payment credited before, as it was sent (200, `Idempotent-Replayed: true`).
 */
export type SettleAnswer = SettleResponse | StoredReply;

/** A failed SettleResponse in the shape the stock client requires (`transaction` "" when nothing was sent). */
export function settleFailure(network: string, reason: string, message?: string, payer = '', transaction = ''): SettleResponse {
  return {
    success: false,
    errorReason: reason,
    ...(message ? { errorMessage: message } : {}),
    payer,
    transaction,
    network: network as SettleResponse['network'],
  };
}

/**
 * What a landed transaction cost the fee payer, once per transaction: at the one transition that
 * ends its settlement (credited, or failed on chain), for the X402FeePayerSpend alarm.
 */
export function recordFee(settlement: X402Settlement): void {
  if (settlement.feeLamports !== undefined) metrics().addMetric(X402_FEE_PAYER_LAMPORTS_METRIC, MetricUnit.Count, settlement.feeLamports);
}

export function successResponse(s: X402Settlement): SettleResponse {
  return { success: true, transaction: s.signature, network: s.network as SettleResponse['network'], payer: s.payer };
}

/** The first SettleResponse of a credited settlement, answered again (nothing credited). */
export function answerCredited(s: X402Settlement): StoredReply {
  return new StoredReply(200, s.response ?? JSON.stringify(successResponse(s)));
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
  result: SettleAnswer;
}

/** The credit's answer, stored under the signature and replayed: the SettleResponse as its JSON. */
const renderSettled = (settled: SettleResponse) => ({ statusCode: 200, body: settled });

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
  // Set by the attempt that decides; a stored answer replayed by `idempotent` (no attempt
  // returns) is a credit made before.
  let outcome: CreditOutcome = 'alreadyCredited';
  const result = await idempotent<SettleAnswer>(
    {
      scope: `${settlement.agentId}#x402-settle`,
      key: settlement.signature,
      request: { signature: settlement.signature, amount: settlement.amount, network: settlement.network },
      rounds: 3,
      // Only a SettleResponse is ever recorded (the credit's own): a replay is never stored again.
      render: (answer) => renderSettled(answer as SettleResponse),
    },
    async ({ now, record }) => {
      const payment: X402PaymentRecord = {
        id: newX402PaymentId(now),
        agentId: settlement.agentId,
        amount: settlement.amount,
        payer: settlement.payer,
        transaction: settlement.signature,
        network: settlement.network,
        resource: settlement.resource,
        createdAt: now.toISOString(),
      };
      try {
        await creditSettlement({
          settlement,
          record: payment,
          response: serialize(response),
          idempotency: record(response),
          events: [settledEvent(payment, now)],
          now,
          ...(agentKeyHash === undefined ? {} : { agentKeyHash }),
        });
      } catch (error) {
        const refused = await creditRefused(error, settlement, now, agentKeyHash);
        outcome = refused.outcome;
        return refused.result;
      }
      outcome = 'credited';
      recordFee(settlement);
      logger().info('x402 payment credited', { signature: settlement.signature, agentId: settlement.agentId, amount: settlement.amount });
      return response;
    },
  );
  return { outcome, result };
}

/** A credit the store refused: what it means for the settlement, and the answer; anything else is thrown. */
async function creditRefused(error: unknown, settlement: X402Settlement, now: Date, agentKeyHash: string | undefined): Promise<Credit> {
  if (error instanceof AgentDisabledError && agentKeyHash !== undefined) {
    forgetAgent(agentKeyHash);
    throw refuse(AUTH_MESSAGES.x402);
  }
  if (error instanceof SettlementNotPendingError) {
    // Credited (or failed) in between, by a racing settle or the reconciler: answer what it recorded.
    const current = await getSettlement(settlement.messageHash);
    if (current?.status === 'CREDITED' && current.agentId === settlement.agentId) {
      return { outcome: 'alreadyCredited', result: answerCredited(current) };
    }
    return {
      outcome: 'notPending',
      result: settleFailure(settlement.network, X402_REASONS.failedBefore, current?.failure, settlement.payer, settlement.signature),
    };
  }
  if (error instanceof TransferCreditedElsewhereError) {
    // A top-up was credited with this very transaction (store/topups/chain-credit.ts): the money is
    // accounted for, so this credit never happens and the settlement ends.
    await failSettlement(settlement.messageHash, error.message, now);
    logger().error(TRANSFER_CREDITED_ELSEWHERE_LOG_MESSAGE, { rail: 'x402', signature: settlement.signature, agentId: settlement.agentId });
    return {
      outcome: 'notPending',
      result: settleFailure(settlement.network, X402_REASONS.settledByAnotherAgent, error.message, settlement.payer, settlement.signature),
    };
  }
  if (error instanceof BalanceLimitError) {
    // The money is in the treasury and owed to the agent; the claim stays PENDING and each
    // reconciler run tries the credit again (reconcileX402), logging this ERROR each time:
    // the X402CreditHeldAtLimit alarm counts it (lib/monitoring.ts) until the agent withdraws.
    logger().error(X402_BALANCE_LIMIT_LOG_MESSAGE, {
      signature: settlement.signature,
      messageHash: settlement.messageHash,
      agentId: settlement.agentId,
      amount: formatAmount(settlement.amount, 'USDC'),
    });
    return {
      outcome: 'heldAtLimit',
      result: settleFailure(settlement.network, X402_REASONS.pending, 'balance limit reached; the credit is retried'),
    };
  }
  throw error;
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
  // `refunded` (DESIGN §28) in the listing only: the settled event's data stays what it was.
  return {
    data: payments.map((p) => ({ ...paymentView(p), refunded: new LosslessNumber(formatAmount(p.refunded ?? 0, 'USDC')) })),
    lastId,
  };
}
