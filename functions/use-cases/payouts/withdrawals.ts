/**
 * Withdrawals: an agent takes its earned balance out, USDC to a Solana wallet or USD to PayPal,
 * minus the 3% platform fee (and, for a USDC wallet whose token account the payout must create,
 * the account-creation fee). The API only commits the payout (PENDING) and hands it to the
 * payout queue; the worker (use-cases/payouts/payouts.ts) pays it.
 */

import { config } from '../../config';
import type { StoredReply } from '../../contracts/api';
import { decodeCursor, encodeCursor, isCount, pageLimit } from '../../contracts/cursor';
import type { ListWithdrawalsQuery, WithdrawRequest } from '../../contracts/request.schemas';
import { renderWithdrawal, type WithdrawalOutcome } from '../../contracts/settled-outcomes';
import type { AgentRef } from '../../core/agents';
import { AgentDisabledError, PayoutInProgressError } from '../../core/errors';
import { withdrawalFees } from '../../core/fees';
import { isId, newPayoutId } from '../../core/ids';
import type { Minor } from '../../core/money';
import { planWithdrawal } from '../../core/payout-plan';
import type { Payout } from '../../core/payouts';
import { destinationProblem, NETWORK_OF, type TokenAccountDirectory } from '../../core/withdrawals';
import { Refusal, refuse } from '../../messages/refusal';
import { logger } from '../../observability/logger';
import { serializeError } from '../../observability/serialize-error';
import { type PayoutMessage, sendPayoutMessage } from '../../queue/payout-queue';
import { RailUnavailableError } from '../../rails/errors';
import { offers } from '../../rails/registrations';
import { usdcTokenAccounts } from '../../rails/solana.token-accounts';
import { commitWithdrawal, getPayout, listPayouts, readLedgerAndFeeBasis } from '../../store/payouts/payout.repository';
import { AUTH_MESSAGES, forgetAgent } from '../auth';
import { idempotent } from '../idempotency';

export type WithdrawInput = WithdrawRequest & { agent: AgentRef; idempotencyKey: string };

export interface WithdrawDeps {
  /** Hands the committed payout to the worker (the SQS queue in production). */
  enqueue(message: PayoutMessage): Promise<void>;
  /** Whether a USDC wallet has its token account; default: the Solana RPC node (one getAccountInfo). */
  tokenAccounts?: TokenAccountDirectory;
}

const defaultDeps: WithdrawDeps = { enqueue: sendPayoutMessage };

/** Rounds of read-balance-then-commit when a concurrent payout moved the balance in between. */
const COMMIT_ROUNDS = 3;

/**
 * Starts a withdrawal. Checks, in order (docs/payouts.md): amount (the request schema),
 * destination (for USDC also its token account, on the chain), fees against the amount, balance,
 * then in one transaction the balance debit, the PENDING payout, the agent's single in-flight lock
 * and the idempotency record. Then sends the payout to the worker; if that send fails the
 * withdrawal still stands (the reconciler re-sends PENDING payouts), so the answer is still 200.
 */
export async function createWithdrawal(input: WithdrawInput, deps: WithdrawDeps = defaultDeps): Promise<WithdrawalOutcome | StoredReply> {
  const { agent, idempotencyKey, amount: gross, currency, walletAddress } = input;
  const createTokenAccount = input.createTokenAccount === true;
  const agentId = agent.id;
  const problem = destinationProblem(currency, walletAddress, {
    // The platform's own wallets: paying out to the deposit wallet would read as a top-up of nobody.
    denied: [config().USDC_MINT, config().SOLANA_HOT_WALLET_ADDRESS, config().SOLANA_DEPOSIT_ADDRESS],
  });
  if (problem) throw problem;
  // Asked once, whatever the rounds below: the chain's answer does not change with a stale balance.
  let quoted: Promise<Quote> | undefined;

  return idempotent(
    {
      scope: `${agentId}#withdraw`,
      key: idempotencyKey,
      // `createTokenAccount: false` asks for nothing, so it is the same request as leaving it out
      // (and as every request made before the flag existed).
      request: { amount: gross, currency, walletAddress, ...(createTokenAccount ? { createTokenAccount: 'true' } : {}) },
      rounds: COMMIT_ROUNDS,
      exhausted: () => refuse('balanceChangedWhileWithdrawing'),
      render: renderWithdrawal,
    },
    async ({ now, record, replayIfUsed }) => {
      quoted ??= quote(input, deps.tokenAccounts ?? usdcTokenAccounts());
      const terms = await quoted;
      if ('refusal' in terms) {
        // The chain may have moved since this very request was accepted (the agent closed the
        // account, or the RPC node is down now): a replay wins over the refusal, as below.
        const replayed = await replayIfUsed();
        if (replayed) return replayed;
        throw terms.refusal;
      }
      // The fee counts everything the agent withdrew in this currency (core/fees.ts `cumulativeFee`),
      // so splitting a withdrawal never pays less than 3% of the whole; read again each round.
      const { ledger, basis } = await readLedgerAndFeeBasis(agentId, currency);
      const decision = planWithdrawal({ ledger, currency, gross, accountCreationFee: terms.accountCreationFee, basis });
      if (decision.kind === 'refused') {
        // Too little left, perhaps because this very request already withdrew it: a replay wins.
        const replayed = await replayIfUsed();
        if (replayed) return replayed;
        throw refuse(decision.reason === 'too-small' ? 'amountTooSmallForFees' : 'withdrawalInsufficientBalance');
      }
      const { fees, debits: plan } = decision;
      const { fee, accountCreationFee, net } = fees;
      const payout: Payout = {
        id: newPayoutId(),
        agentId,
        currency,
        status: 'PENDING',
        network: NETWORK_OF[currency],
        walletAddress,
        amount: gross,
        fee,
        accountCreationFee,
        netAmount: net,
        feeCounted: true,
        idempotencyKey,
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
        attempts: 0,
      };
      const accepted: WithdrawalOutcome = { payout, createsTokenAccount: createTokenAccount };
      try {
        await commitWithdrawal(payout, agent.keyHash, plan, record(accepted), now, basis);
      } catch (error) {
        if (error instanceof AgentDisabledError) {
          forgetAgent(agent.keyHash);
          throw refuse(AUTH_MESSAGES.withdraw);
        }
        if (error instanceof PayoutInProgressError) throw refuse('payoutInProgress');
        throw error;
      }
      await enqueueAfterCommit(payout, deps);
      return accepted;
    },
  );
}

/** What the chain says a withdrawal's creation fee is, or why it is refused before anything is written. */
type Quote = { accountCreationFee: Minor } | { refusal: Refusal };

/**
 * The account-creation fee of a withdrawal. USDC first asks the chain whether the wallet's token
 * account exists (one getAccountInfo): missing → refused, unless the agent asked
 * `createTokenAccount`; then the payout will create it and the withdrawal is charged
 * ACCOUNT_CREATION_FEE (none when the account exists: nothing to create). A net left at or below
 * zero even by the standalone 3% is refused at once (the round re-checks it with the agent's fee
 * basis). An RPC outage is a 503, never a guess: accepting blind would bring back the payout that
 * fails minutes later.
 */
async function quote(input: WithdrawInput, tokenAccounts: TokenAccountDirectory): Promise<Quote> {
  let creates = false;
  if (offers(input.currency, 'tokenAccounts')) {
    let exists: boolean;
    try {
      exists = await tokenAccounts.hasUsdcAccount(input.walletAddress);
    } catch (error) {
      if (!(error instanceof RailUnavailableError)) throw error;
      logger().warn('solana rpc unavailable; withdrawal refused with 503', { error: serializeError(error) });
      return { refusal: new Refusal('solanaUnavailable', [], { cause: error }) };
    }
    if (!exists && input.createTokenAccount !== true) return { refusal: refuse('noUsdcTokenAccount') };
    creates = !exists;
  }
  const accountCreationFee = creates ? config().ACCOUNT_CREATION_FEE : 0;
  if (withdrawalFees(input.amount, accountCreationFee).net <= 0) return { refusal: refuse('amountTooSmallForFees') };
  return { accountCreationFee };
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
export async function listWithdrawals(agentId: string, query: ListWithdrawalsQuery): Promise<WithdrawalsAnswer> {
  if (query.payoutId !== undefined) {
    const payout = isId('payout', query.payoutId) ? await getPayout(agentId, query.payoutId) : undefined;
    if (!payout) throw refuse('payoutNotFound');
    return { kind: 'one', payout };
  }
  const cursor = query.cursor ? readPayoutCursor(query.cursor) : undefined;
  const limit = pageLimit(query.limit, cursor?.limit);
  const page = await listPayouts(agentId, { limit, ...(cursor ? { after: cursor.after } : {}) });
  return { kind: 'page', payouts: page.payouts, nextCursor: page.lastId ? encodeCursor([page.lastId, limit]) : null };
}

/** What a list of withdrawals answers: the one payout asked for, or a page of them. */
export type WithdrawalsAnswer = { kind: 'one'; payout: Payout } | { kind: 'page'; payouts: Payout[]; nextCursor: string | null };
