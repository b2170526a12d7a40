/**
 * The payout state machine, driven by the payout worker (one SQS message) and by the
 * reconciler (stale payouts) through the same function, `drivePayout`:
 *
 *   PENDING ──claim──▶ PROCESSING ──rail.pay──▶ COMPLETED            (lock released)
 *      ▲                   │   ▲                 FAILED + refund      (lock released, one transaction)
 *      │                   │   └── pending: stays PROCESSING, re-checked by the reconciler
 *      │                   ├── throw (transient): stays PROCESSING, retried by SQS / reconciler
 *      │                   └── agent disabled: HELD (nothing started at the rail; lock kept)
 *      └──── operator release ────────────────────── HELD ── operator cancel: FAILED + refund
 *
 * Every attempt holds a lease (a token on the payout item) that fences its writes: only the
 * holder can save rail state or finish the payout, and a crashed holder's lease runs out.
 * The rail saves its progress through the checkpoint BEFORE it acts, so a later attempt
 * finds out what happened instead of paying again. See docs/payouts.md.
 */
import { randomUUID } from 'node:crypto';
import { config } from '../../config';
import { DomainError, LeaseLostError } from '../../core/errors';
import type { Currency } from '../../core/money';
import type { PayoutRail, RailCheckpoint, RailOutcome } from '../../core/payout-rail';
import { HELD_AGENT_DISABLED, isX402Refund, type Payout, type PayoutRef, type RailState } from '../../core/payouts';
import { logger } from '../../observability/logger';
import { serializeError } from '../../observability/serialize-error';
import { type PayoutMessage, sendPayoutMessage } from '../../queue/payout-queue';
import { getAgentById } from '../../store/identity/agent.repository';
import { getPayout } from '../../store/payouts/payout.repository';
import { listStaleInflight, touchPending } from '../../store/payouts/payout-inflight.repository';
import {
  claimPayout,
  completePayout,
  failPayout,
  holdPayout,
  recordPendingCheck,
  saveRailState,
} from '../../store/payouts/payout-lease.repository';
import { X402_REFUND_PREFIX } from '../../store/table';
import { payoutEvents } from '../events/events';

/** Points between the steps of one attempt, in order. */
export type PayoutStep = 'afterClaim' | 'afterCheckpoint' | 'afterRail' | 'afterFinalize';

/**
 * Optional observers called between steps. Production passes none; tests throw from them to
 * simulate a crash at that exact point (the attempt stops, nothing is cleaned up, the lease is
 * left to run out), then check that the next attempt finishes the payout exactly once.
 */
export type PayoutHooks = Partial<Record<PayoutStep, (payout: Payout) => void | Promise<void>>>;

export interface PayoutDeps {
  railFor(currency: Currency): PayoutRail;
  hooks?: PayoutHooks;
  /** The time leases are taken and judged by (tests move it forward instead of sleeping). */
  clock?: () => Date;
}

const systemClock = () => new Date();

export type DriveResult =
  | 'completed'
  | 'failed'
  /** The rail could not tell yet; the payout stays PROCESSING until the reconciler looks again. */
  | 'pending'
  /** Already COMPLETED or FAILED: nothing was done (redelivery, duplicate message). */
  | 'already-final'
  /** Another live attempt holds the payout; it (or, failing that, the reconciler) finishes it. */
  | 'busy'
  /** Its agent is disabled: HELD, nothing started at the rail, until the operator releases or cancels it. */
  | 'held'
  | 'missing';

/** The agent item could not be found by id (the index lags a key rotation): try again later, never guess. */
export class PayoutAgentUnknownError extends DomainError {
  constructor(agentId: string) {
    super(`agent ${agentId} of a payout was not found`);
  }
}

/**
 * Whether `payout` may be paid now (docs/payouts.md, "Held payouts"): its agent is enabled, or the
 * operator released it from a hold after the agent's enabled flag last changed. Read from the
 * agent item itself (strongly consistent, found by id), so a disable in the console counts at once.
 */
export async function payoutMayBePaid(payout: Pick<Payout, 'agentId' | 'releasedAt'>): Promise<boolean> {
  const agent = await getAgentById(payout.agentId);
  if (!agent) throw new PayoutAgentUnknownError(payout.agentId);
  if (agent.enabled) return true;
  if (payout.releasedAt === undefined) return false;
  // A release counts for the disable it answered, not for one that came after it.
  return agent.enabledChangedAt === undefined || agent.enabledChangedAt <= payout.releasedAt;
}

/**
 * One attempt at a payout: claim it, let its rail pay (or find out what an earlier attempt's
 * payment became), record the outcome. Safe to call any number of times, concurrently too.
 * Throws only on transient trouble (the rail or DynamoDB unreachable): the payout is then left
 * PROCESSING for a later attempt.
 */
export async function drivePayout(ref: PayoutRef, deps: PayoutDeps): Promise<DriveResult> {
  const clock = deps.clock ?? systemClock;
  const token = randomUUID();
  const claim = await claimPayout(ref, token, clock());
  if (claim.kind === 'missing') return 'missing';
  if (claim.kind === 'final') return 'already-final';
  if (claim.kind === 'busy') return 'busy';
  // Held already (a duplicate message): it waits for the operator, nothing to do.
  if (claim.kind === 'held') return 'held';
  const payout = claim.payout;
  const ctx = { payoutId: payout.id, agentId: payout.agentId, attempt: payout.attempts };
  logger().info('payout claimed', { ...ctx, currency: payout.currency, resumed: payout.railState !== undefined });
  await deps.hooks?.afterClaim?.(payout);

  // The kill switch reaches payouts: nothing is started for a disabled agent. A payout the rail
  // has something of (railState) goes to the rail, which finds out what that became and starts
  // nothing new (`mayPay`); one it has nothing of is held here, without asking the rail at all.
  // An x402 refund gives money back: never held by the kill switch (DESIGN §28).
  const mayPay = () => (isX402Refund(payout) ? Promise.resolve(true) : payoutMayBePaid(payout));
  if (payout.railState === undefined && !(await mayPay())) return hold(payout, token, clock(), ctx, ref);

  let saved: RailState | undefined = payout.railState;
  const checkpoint: RailCheckpoint = {
    get saved() {
      return saved;
    },
    async save(state) {
      await saveRailState(payout, token, state, clock());
      saved = state;
      await deps.hooks?.afterCheckpoint?.(payout);
    },
  };

  let outcome: RailOutcome;
  try {
    outcome = await deps.railFor(payout.currency).pay(
      {
        payoutId: payout.id,
        currency: payout.currency,
        netAmount: payout.netAmount,
        destination: payout.walletAddress,
        // The agent paid for the destination's token account, or a payment's first refund creates
        // the payer's at the service's cost: the rail creates it if missing.
        createTokenAccount: payout.accountCreationFee > 0 || payout.createsTokenAccount === true,
        // Asked again right before the rail signs or sends: the agent may have been disabled since.
        mayPay,
      },
      checkpoint,
    );
  } catch (error) {
    // The rail may wrap what the checkpoint threw; a lost lease anywhere in the chain means stop.
    if (isLeaseLost(error)) return lostLease(ref);
    throw error;
  }
  await deps.hooks?.afterRail?.(payout);

  const recorded = await recordOutcome(payout, token, outcome, { clock, ctx, ref });
  if (recorded !== undefined) return recorded;
  await deps.hooks?.afterFinalize?.(payout);
  return outcome.kind;
}

/**
 * The rail's outcome made durable: COMPLETED or FAILED (the gross amount back to the agent) with
 * its event, a pending check for the reconciler, or HELD. Answers what ends the attempt early (a
 * hold, a lost lease); undefined when the attempt goes on to its hooks.
 */
async function recordOutcome(
  payout: Payout,
  token: string,
  outcome: RailOutcome,
  { clock, ctx, ref }: { clock: () => Date; ctx: Record<string, unknown>; ref: PayoutRef },
): Promise<DriveResult | undefined> {
  try {
    switch (outcome.kind) {
      case 'completed': {
        const now = clock();
        const txHash = payout.network === 'SOL' ? outcome.txHash : undefined;
        const final: Payout = {
          ...payout,
          status: 'COMPLETED',
          processedAt: now.toISOString(),
          updatedAt: now.toISOString(),
          externalId: outcome.externalId,
          ...(txHash ? { txHash } : {}),
        };
        // payout.completed commits with the payout itself (the outbox, docs/webhooks.md).
        await completePayout(payout, token, { externalId: outcome.externalId, txHash }, now, payoutEvents(final, now));
        logger().info('payout completed', { ...ctx, externalId: outcome.externalId });
        break;
      }
      case 'failed': {
        const now = clock();
        const final: Payout = {
          ...payout,
          status: 'FAILED',
          processedAt: now.toISOString(),
          updatedAt: now.toISOString(),
          failureReason: outcome.reason,
          ...(outcome.externalId ? { externalId: outcome.externalId } : {}),
        };
        await failPayout(payout, token, { reason: outcome.reason, externalId: outcome.externalId }, now, payoutEvents(final, now));
        logger().warn('payout failed; gross amount refunded to the agent', {
          ...ctx,
          reason: outcome.reason,
          externalId: outcome.externalId,
        });
        break;
      }
      case 'pending':
        await recordPendingCheck(payout, token, outcome.externalId, clock());
        logger().info('payout not final yet; the reconciler will look again', { ...ctx, externalId: outcome.externalId });
        break;
      case 'held':
        return hold(payout, token, clock(), ctx, ref);
    }
  } catch (error) {
    if (error instanceof LeaseLostError) return lostLease(ref);
    throw error;
  }
  return undefined;
}

/** PROCESSING → HELD: the agent is disabled and nothing of the payout is moving at its rail. */
async function hold(payout: Payout, token: string, now: Date, ctx: Record<string, unknown>, ref: PayoutRef): Promise<DriveResult> {
  try {
    await holdPayout(payout, token, HELD_AGENT_DISABLED, now);
  } catch (error) {
    if (error instanceof LeaseLostError) return lostLease(ref);
    throw error;
  }
  // An operator's call: the payout waits for a release or a cancel (docs/payouts.md).
  logger().warn('payout held: its agent is disabled; the operator releases or cancels it', { ...ctx, currency: payout.currency });
  return 'held';
}

/** This attempt's lease went to another attempt (it ran out): whoever holds it now finishes. */
async function lostLease(ref: PayoutRef): Promise<DriveResult> {
  const now = await getPayout(ref.agentId, ref.payoutId);
  logger().warn('payout lease lost to another attempt', { payoutId: ref.payoutId, status: now?.status });
  return now?.status === 'COMPLETED' || now?.status === 'FAILED' ? 'already-final' : 'busy';
}

export interface ReconcileDeps extends PayoutDeps {
  /** Re-sends a PENDING payout to the worker (the SQS queue in production). */
  enqueue?(message: PayoutMessage): Promise<void>;
  /** Epoch ms after which no further payout is started (the Lambda's time is running out). */
  startBefore?: number;
}

export interface ReconcileReport {
  resent: number;
  driven: Record<DriveResult, number>;
  errors: number;
  /**
   * Payouts PROCESSING for longer than RECONCILE_PROCESSING_AFTER_SECONDS that this run could
   * not finish (the network still says "not final", another attempt holds them, or an error);
   * at most RECONCILE_MAX_PER_RUN. The StuckPayouts metric.
   */
  stuck: number;
  /** Of `stuck`, the refunds of x402 payments (ids `xr…`, DESIGN §28): the StuckX402Refunds metric. */
  stuckRefunds: number;
}

/** How many stale PROCESSING payouts the reconciler drives at once. */
const RECONCILE_CONCURRENCY = 4;

/**
 * One reconciler run. PENDING payouts older than RECONCILE_PENDING_AFTER_SECONDS were committed
 * but their message was lost or dead-lettered: they are sent to the queue again. PROCESSING
 * payouts untouched for RECONCILE_PROCESSING_AFTER_SECONDS (rail said "pending", the worker
 * crashed, or the message went to the DLQ) are driven to an outcome with `drivePayout`, the
 * worker's own code path. One payout's trouble never stops the run.
 */
export async function reconcilePayouts(deps: ReconcileDeps): Promise<ReconcileReport> {
  const cfg = config();
  const clock = deps.clock ?? systemClock;
  const now = clock();
  const enqueue = deps.enqueue ?? sendPayoutMessage;
  const report: ReconcileReport = {
    resent: 0,
    driven: { completed: 0, failed: 0, pending: 0, 'already-final': 0, busy: 0, held: 0, missing: 0 },
    errors: 0,
    stuck: 0,
    stuckRefunds: 0,
  };

  const pendingBefore = new Date(now.getTime() - cfg.RECONCILE_PENDING_AFTER_SECONDS * 1000);
  for (const ref of await listStaleInflight('PENDING', pendingBefore, cfg.RECONCILE_MAX_PER_RUN)) {
    try {
      await enqueue({ payoutId: ref.payoutId, agentId: ref.agentId });
      // Restart its clock so the next run does not send it again straight away.
      await touchPending(ref, clock());
      report.resent += 1;
    } catch (error) {
      report.errors += 1;
      logger().error('reconciler could not re-send a pending payout', { payoutId: ref.payoutId, error: serializeError(error) });
    }
  }

  const processingBefore = new Date(now.getTime() - cfg.RECONCILE_PROCESSING_AFTER_SECONDS * 1000);
  const stale = await listStaleInflight('PROCESSING', processingBefore, cfg.RECONCILE_MAX_PER_RUN);
  let next = 0;
  const ended = new Set<string>();
  const lane = async () => {
    while (next < stale.length) {
      // Left for the next run rather than cut off mid-payment when the function's time ends.
      if (deps.startBefore !== undefined && Date.now() > deps.startBefore) break;
      const ref = stale[next++];
      if (!ref) break;
      try {
        const result = await drivePayout(ref, deps);
        report.driven[result] += 1;
        if (result === 'completed' || result === 'failed' || result === 'already-final' || result === 'held') ended.add(ref.payoutId);
      } catch (error) {
        report.errors += 1;
        logger().warn('reconciler could not finish a payout yet', { payoutId: ref.payoutId, error: serializeError(error) });
      }
    }
  };
  await Promise.all(Array.from({ length: RECONCILE_CONCURRENCY }, lane));
  // A held payout is out of the reconciler's hands (the operator's now): not stuck.
  const finished = report.driven.completed + report.driven.failed + report.driven['already-final'] + report.driven.held;
  report.stuck = stale.length - finished;
  report.stuckRefunds = stale.filter((ref) => ref.payoutId.startsWith(X402_REFUND_PREFIX) && !ended.has(ref.payoutId)).length;
  if (report.resent > 0 || stale.length > 0 || report.errors > 0) logger().info('reconciler run', { ...report });
  return report;
}

function isLeaseLost(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    if (current instanceof LeaseLostError) return true;
    current = current.cause;
  }
  return false;
}
