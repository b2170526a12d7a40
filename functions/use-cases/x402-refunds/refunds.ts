/**
 * Refunds of x402 payments (DESIGN §28, docs/x402.md "Refunds"). x402 `exact` has no way back once
 * settled; here the seller agent's earnings are in the ledger, so it can give a payment back: the
 * agent's USDC is debited at once, in one transaction with the refund, the payment's `refunded`
 * counter and the idempotency record (store/x402-refunds), and the refund is handed to the payout
 * worker, which pays it from the hot wallet to the payer's token account as it pays a withdrawal
 * (exactly once: use-cases/payouts/payouts.ts and rails/solana.rail.ts), with no fee.
 *
 * Checks, in order: the agent key (enabled or not: refunds return money, the kill switch never
 * blocks them), the payment (another agent's is unknown: 404), the amount against what is left of
 * the payment (400 `refund exceeds payment`), the payer (a wallet the hot wallet can pay), the
 * agent's balance (402 `insufficient balance`).
 */
import { config } from '../../config';
import type { StoredReply } from '../../contracts/api';
import { x402RefundCreatedView } from '../../contracts/x402-refund';
import type { Agent } from '../../core/agents';
import { isId, newX402RefundId } from '../../core/ids';
import { planShardDebit } from '../../core/ledger';
import type { Minor } from '../../core/money';
import { isX402Refund, type Payout } from '../../core/payouts';
import { isSolanaWalletAddress } from '../../core/withdrawals';
import { X402_PAYMENT_ID } from '../../core/x402';
import { AUTH_MESSAGES } from '../../messages/credentials';
import { refuse } from '../../messages/refusal';
import { logger } from '../../observability/logger';
import { serializeError } from '../../observability/serialize-error';
import { type PayoutMessage, sendPayoutMessage } from '../../queue/payout-queue';
import { readAgentItem, toAgent } from '../../store/identity/agent.repository';
import { getPayout } from '../../store/payouts/payout.repository';
import { commitX402Refund, readRefundBasis } from '../../store/x402-refunds/x402-refund.repository';
import { idempotent } from '../idempotency';

export interface RefundInput {
  /** The x-agent-key's hash: looked up here, enabled or not. */
  agentKeyHash: string;
  paymentId: string | undefined;
  idempotencyKey: string;
  /** Micro-USDC; undefined: what is left of the payment. */
  amount?: Minor;
}

export interface RefundDeps {
  /** Hands the committed refund to the payout worker (the SQS queue in production). */
  enqueue(message: PayoutMessage): Promise<void>;
}

const defaultDeps: RefundDeps = { enqueue: sendPayoutMessage };

/**
 * Rounds of read-then-commit: a round is lost only when a shard or the payment moved in between
 * (a concurrent refund of the same payment, a withdrawal, a charge); the next reads again.
 */
const COMMIT_ROUNDS = 5;

/** What a refund answers and stores under its Idempotency-Key (202). */
export const renderRefund = (refund: Payout) => ({ statusCode: 202, body: x402RefundCreatedView(refund) });

/** The agent an x-agent-key names, enabled or not (one strongly consistent read, never the auth cache). */
async function agentOfKey(agentKeyHash: string): Promise<Agent> {
  const item = await readAgentItem(agentKeyHash);
  if (!item) throw refuse(AUTH_MESSAGES.x402Refund);
  return toAgent(item);
}

/**
 * Refunds `amount` (default: the rest) of the agent's x402 payment `paymentId` to its payer: the
 * PENDING refund, or the stored answer of an earlier request with this Idempotency-Key (another
 * body under it: 422).
 */
export async function refundX402Payment(input: RefundInput, deps: RefundDeps = defaultDeps): Promise<Payout | StoredReply> {
  const agent = await agentOfKey(input.agentKeyHash);
  const paymentId = input.paymentId ?? '';
  if (!X402_PAYMENT_ID.test(paymentId)) throw refuse('x402PaymentNotFound');
  return idempotent(
    {
      scope: `${agent.id}#x402-refund`,
      key: input.idempotencyKey,
      request: { paymentId, amount: input.amount ?? 'rest' },
      rounds: COMMIT_ROUNDS,
      render: renderRefund,
    },
    async ({ now, record, replayIfUsed }) => {
      // A refusal decided from what is read may be this very request's own doing: a replay wins.
      const refused = async (code: Parameters<typeof refuse>[0]) => {
        const replayed = await replayIfUsed();
        if (replayed) return replayed;
        throw refuse(code);
      };
      const { ledger, payment } = await readRefundBasis(agent.id, paymentId);
      if (!payment) return refused('x402PaymentNotFound');
      const refunded = payment.refunded ?? 0;
      const left = payment.amount - refunded;
      const amount = input.amount ?? left;
      if (amount <= 0 || amount > left) return refused('refundExceedsPayment');
      const cfg = config();
      const denied = [cfg.USDC_MINT, cfg.SOLANA_HOT_WALLET_ADDRESS, cfg.SOLANA_DEPOSIT_ADDRESS, cfg.X402_PAY_TO];
      if (!isSolanaWalletAddress(payment.payer, { denied })) return refused('refundPayerNotAWallet');
      const plan = planShardDebit(ledger, 'USDC', amount);
      if (!plan) return refused('insufficientBalance');
      const at = now.toISOString();
      const refund: Payout = {
        id: newX402RefundId(),
        agentId: agent.id,
        currency: 'USDC',
        status: 'PENDING',
        network: 'SOL',
        walletAddress: payment.payer,
        amount,
        // No platform fee on a refund, and the service pays for the payer's token account.
        fee: 0,
        accountCreationFee: 0,
        netAmount: amount,
        idempotencyKey: input.idempotencyKey,
        createdAt: at,
        updatedAt: at,
        attempts: 0,
        paymentId,
        // Only the payment's first refund may create the account (core/payouts.ts `createsTokenAccount`).
        ...(refunded === 0 ? { createsTokenAccount: true } : {}),
      };
      await commitX402Refund(refund, payment, plan, record(refund), now);
      await enqueueAfterCommit(refund, deps);
      return refund;
    },
  );
}

async function enqueueAfterCommit(refund: Payout, deps: RefundDeps): Promise<void> {
  try {
    await deps.enqueue({ payoutId: refund.id, agentId: refund.agentId });
  } catch (error) {
    // Committed is committed: the reconciler re-sends PENDING payouts (refunds among them).
    logger().error('x402 refund committed but not queued; the reconciler will re-send it', {
      refundId: refund.id,
      agentId: refund.agentId,
      error: serializeError(error),
    });
  }
}

/** `GET /api/v1/agents/x402/refunds/{id}`: one of the agent's refunds (404 for an unknown id or another agent's). */
export async function getX402Refund(agentKeyHash: string, refundId: string | undefined): Promise<Payout> {
  const agent = await agentOfKey(agentKeyHash);
  const refund = isId('x402Refund', refundId) ? await getPayout(agent.id, refundId) : undefined;
  if (!refund || !isX402Refund(refund)) throw refuse('x402RefundNotFound');
  return refund;
}
