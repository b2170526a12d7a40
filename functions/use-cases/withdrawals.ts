/**
 * Withdrawals: an agent takes its earned balance out, USDC to a Solana wallet or USD to PayPal,
 * minus the 3% platform fee. The API only commits the payout (PENDING) and hands it to the
 * payout queue; the worker (use-cases/payouts.ts) pays it.
 */
import { ConflictError, IdempotencyInProgressError, NotFoundError, ValidationError } from '../core/errors';
import { platformFee } from '../core/fees';
import { newPayoutId } from '../core/ids';
import { type Currency, type Minor, unitsToMinor } from '../core/money';
import { destinationProblem, MIN_WITHDRAWAL_UNITS, NETWORK_OF } from '../core/withdrawals';
import { decodeCursor, encodeCursor } from '../http/cursor';
import { type HttpResult, serialize } from '../http/response';
import { logger } from '../observability/logger';
import { serializeError } from '../observability/serialize-error';
import { type PayoutMessage, sendPayoutMessage } from '../queue/payout-queue';
import { planShardDebit, readAgentLedger } from '../store/balance.repository';
import { IdempotencyRecordExistsError } from '../store/charge.repository';
import {
  BalanceChangedError,
  commitWithdrawal,
  getPayout,
  listPayouts,
  type Payout,
  PayoutInProgressError,
} from '../store/payout.repository';
import { ConcurrencyError } from '../store/transact';
import { parseMoney } from './charges';
import { fingerprint, replay } from './idempotency';
import { payoutView, withdrawalView } from './views';

export interface WithdrawInput {
  agentId: string;
  idempotencyKey: string;
  /** The amount's JSON literal, exactly as sent. */
  amount: string;
  currency: Currency;
  walletAddress: string;
}

export interface WithdrawDeps {
  /** Hands the committed payout to the worker (the SQS queue in production). */
  enqueue(message: PayoutMessage): Promise<void>;
}

const defaultDeps: WithdrawDeps = { enqueue: sendPayoutMessage };

const AT_LEAST_MIN = `amount must be at least ${MIN_WITHDRAWAL_UNITS}`;

/** Gross amount in minor units: at least the minimum, within MAX_AMOUNT, never rounded. */
export function parseWithdrawalAmount(literal: string, currency: Currency): Minor {
  // The sign of a JSON number literal survives a float parse exactly; zero and negatives get
  // the withdrawal's own message rather than the generic "greater than 0".
  if (!(Number(literal) > 0)) throw new ValidationError(AT_LEAST_MIN);
  const gross = parseMoney(literal, currency);
  if (gross < unitsToMinor(MIN_WITHDRAWAL_UNITS, currency)) throw new ValidationError(AT_LEAST_MIN);
  return gross;
}

/** Rounds of read-balance-then-commit when a concurrent payout moved the balance in between. */
const COMMIT_ROUNDS = 3;

/**
 * Starts a withdrawal. Checks, in order (DESIGN §6): amount, destination, balance, then in one
 * transaction the balance debit, the PENDING payout, the agent's single in-flight lock and the
 * idempotency record. Then sends the payout to the worker; if that send fails the withdrawal
 * still stands (the reconciler re-sends PENDING payouts), so the answer is still 200.
 */
export async function createWithdrawal(input: WithdrawInput, deps: WithdrawDeps = defaultDeps): Promise<HttpResult> {
  const gross = parseWithdrawalAmount(input.amount, input.currency);
  const problem = destinationProblem(input.currency, input.walletAddress);
  if (problem) throw new ValidationError(problem);

  const { fee, net } = platformFee(gross);
  const scope = `${input.agentId}#withdraw`;
  const fp = fingerprint({ amount: gross, currency: input.currency, walletAddress: input.walletAddress });

  for (let round = 0; round < COMMIT_ROUNDS; round++) {
    const now = new Date();
    const ledger = await readAgentLedger(input.agentId);
    const debits = planShardDebit(input.agentId, ledger, input.currency, gross);
    if (!debits) {
      // Too little left, perhaps because this very request already withdrew it: a replay wins.
      const answer = await replay(scope, input.idempotencyKey, undefined, fp, now);
      if (answer) return answer;
      throw new ValidationError('insufficient balance');
    }
    const payout: Payout = {
      id: newPayoutId(),
      agentId: input.agentId,
      currency: input.currency,
      status: 'PENDING',
      network: NETWORK_OF[input.currency],
      walletAddress: input.walletAddress,
      amount: gross,
      fee,
      netAmount: net,
      idempotencyKey: input.idempotencyKey,
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
      attempts: 0,
    };
    const body = serialize(withdrawalView(payout));
    try {
      await commitWithdrawal(payout, debits, { scope, key: input.idempotencyKey, record: { fingerprint: fp, statusCode: 200, body } }, now);
    } catch (error) {
      if (error instanceof IdempotencyRecordExistsError) {
        const answer = await replay(scope, input.idempotencyKey, error.existing, fp, new Date());
        if (answer) return answer;
        continue;
      }
      if (error instanceof PayoutInProgressError) throw new ValidationError('payout already in progress');
      if (error instanceof BalanceChangedError) continue;
      // Conflicts past every retry: most likely a concurrent request with this very key.
      if (error instanceof ConcurrencyError) throw new IdempotencyInProgressError();
      throw error;
    }
    await enqueueAfterCommit(payout, deps);
    return { statusCode: 200, rawBody: body };
  }
  throw new ConflictError('balance changed while withdrawing, retry', 1);
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

const PAYOUT_ID = /^p[0-9a-z]{26}$/;

export interface ListWithdrawalsQuery {
  limit: number;
  cursor?: string | undefined;
  payoutId?: string | undefined;
}

/** A payout-list cursor: the last payout id returned. */
function readPayoutCursor(text: string): string {
  return decodeCursor(text, (parts) =>
    parts.length === 1 && typeof parts[0] === 'string' && PAYOUT_ID.test(parts[0]) ? parts[0] : undefined,
  );
}

/**
 * `?payoutId=` → that Payout object (404 `payout not found` also for another agent's payout);
 * otherwise `{payouts, nextCursor}`, newest first, one query per page however deep.
 */
export async function listWithdrawals(agentId: string, query: ListWithdrawalsQuery): Promise<HttpResult> {
  if (query.payoutId !== undefined) {
    const payout = PAYOUT_ID.test(query.payoutId) ? await getPayout(agentId, query.payoutId) : undefined;
    if (!payout) throw new NotFoundError('payout not found');
    return { statusCode: 200, body: payoutView(payout) };
  }
  const after = query.cursor ? readPayoutCursor(query.cursor) : undefined;
  const page = await listPayouts(agentId, { limit: query.limit, ...(after ? { after } : {}) });
  return {
    statusCode: 200,
    body: { payouts: page.payouts.map(payoutView), nextCursor: page.lastId ? encodeCursor([page.lastId]) : null },
  };
}
