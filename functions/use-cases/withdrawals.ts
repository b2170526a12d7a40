/**
 * Withdrawals: an agent takes its earned balance out, USDC to a Solana wallet or USD to PayPal,
 * minus the 3% platform fee. The API only commits the payout (PENDING) and hands it to the
 * payout queue; the worker (use-cases/payouts.ts) pays it.
 */
import type { ListWithdrawalsQuery, WithdrawRequest } from '../api/request.schemas';
import { config } from '../config';
import type { AgentRef } from '../core/agents';
import {
  AgentDisabledError,
  ConflictError,
  NotFoundError,
  PayoutInProgressError,
  UnauthorizedError,
  ValidationError,
} from '../core/errors';
import { platformFee } from '../core/fees';
import { isId, newPayoutId } from '../core/ids';
import { planShardDebit } from '../core/ledger';
import type { Payout } from '../core/payouts';
import { destinationProblem, NETWORK_OF } from '../core/withdrawals';
import { decodeCursor, encodeCursor, isCount, pageLimit } from '../http/cursor';
import type { HttpResult } from '../http/response';
import { logger } from '../observability/logger';
import { serializeError } from '../observability/serialize-error';
import { type PayoutMessage, sendPayoutMessage } from '../queue/payout-queue';
import { readAgentLedger } from '../store/balance.repository';
import { commitWithdrawal, getPayout, listPayouts } from '../store/payout.repository';
import { AUTH_MESSAGES, forgetAgent } from './auth';
import { idempotentCommand } from './idempotency';
import { payoutView, withdrawalView } from './views';

export type WithdrawInput = WithdrawRequest & { agent: AgentRef; idempotencyKey: string };

export interface WithdrawDeps {
  /** Hands the committed payout to the worker (the SQS queue in production). */
  enqueue(message: PayoutMessage): Promise<void>;
}

const defaultDeps: WithdrawDeps = { enqueue: sendPayoutMessage };

/** Rounds of read-balance-then-commit when a concurrent payout moved the balance in between. */
const COMMIT_ROUNDS = 3;

/**
 * Starts a withdrawal. Checks, in order (docs/payouts.md): amount (the request schema),
 * destination, balance, then in one transaction the balance debit, the PENDING payout, the
 * agent's single in-flight lock and the idempotency record. Then sends the payout to the worker;
 * if that send fails the withdrawal still stands (the reconciler re-sends PENDING payouts), so
 * the answer is still 200.
 */
export async function createWithdrawal(input: WithdrawInput, deps: WithdrawDeps = defaultDeps): Promise<HttpResult> {
  const { agent, idempotencyKey, amount: gross, currency, walletAddress } = input;
  const agentId = agent.id;
  const problem = destinationProblem(currency, walletAddress, { denied: [config().USDC_MINT, config().SOLANA_HOT_WALLET_ADDRESS] });
  if (problem) throw new ValidationError(problem);
  const { fee, net } = platformFee(gross);

  return idempotentCommand(
    {
      scope: `${agentId}#withdraw`,
      key: idempotencyKey,
      request: { amount: gross, currency, walletAddress },
      rounds: COMMIT_ROUNDS,
      exhausted: () => new ConflictError('balance changed while withdrawing, retry', 1),
    },
    async ({ now, answer, replayIfUsed }) => {
      const plan = planShardDebit(await readAgentLedger(agentId), currency, gross);
      if (!plan) {
        // Too little left, perhaps because this very request already withdrew it: a replay wins.
        const replayed = await replayIfUsed();
        if (replayed) return replayed;
        throw new ValidationError('insufficient balance');
      }
      const payout: Payout = {
        id: newPayoutId(),
        agentId,
        currency,
        status: 'PENDING',
        network: NETWORK_OF[currency],
        walletAddress,
        amount: gross,
        fee,
        accountCreationFee: 0,
        netAmount: net,
        idempotencyKey,
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
        attempts: 0,
      };
      const accepted = answer(200, withdrawalView(payout));
      try {
        await commitWithdrawal(payout, agent.keyHash, plan, accepted.record, now);
      } catch (error) {
        if (error instanceof AgentDisabledError) {
          forgetAgent(agent.keyHash);
          throw new UnauthorizedError(AUTH_MESSAGES.withdraw);
        }
        if (error instanceof PayoutInProgressError) throw new ValidationError('payout already in progress');
        throw error;
      }
      await enqueueAfterCommit(payout, deps);
      return accepted.result;
    },
  );
}

async function enqueueAfterCommit(payout: Payout, deps: WithdrawDeps): Promise<void> {
  try {
    await deps.enqueue({ payoutId: payout.id, agentId: payout.agentId });
  } catch (error) {
    // Committed is committed: the reconciler re-sends PENDING payouts, the agent gets its 200.
    logger().error('payout committed but not queued; the reconciler will re-send it', {
      payoutId: payout.id,
      agentId: payout.agentId,
      error: serializeError(error),
    });
  }
}

/** A payout-list cursor: the last payout id returned and the page size it was made with. */
function readPayoutCursor(text: string): { after: string; limit: number } {
  return decodeCursor(text, ([after, limit, ...rest]) =>
    rest.length === 0 && isId('payout', typeof after === 'string' ? after : undefined) && isCount(limit)
      ? { after: after as string, limit }
      : undefined,
  );
}

/**
 * `?payoutId=` → that Payout object (404 `payout not found` also for another agent's payout);
 * otherwise `{payouts, nextCursor}`, newest first, one query per page however deep.
 */
export async function listWithdrawals(agentId: string, query: ListWithdrawalsQuery): Promise<HttpResult> {
  if (query.payoutId !== undefined) {
    const payout = isId('payout', query.payoutId) ? await getPayout(agentId, query.payoutId) : undefined;
    if (!payout) throw new NotFoundError('payout not found');
    return { statusCode: 200, body: payoutView(payout) };
  }
  const cursor = query.cursor ? readPayoutCursor(query.cursor) : undefined;
  const limit = pageLimit(query.limit, cursor?.limit);
  const page = await listPayouts(agentId, { limit, ...(cursor ? { after: cursor.after } : {}) });
  return {
    statusCode: 200,
    body: { payouts: page.payouts.map(payoutView), nextCursor: page.lastId ? encodeCursor([page.lastId, limit]) : null },
  };
}
