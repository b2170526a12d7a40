import { config } from '../../config';
import { formatAmount, type Minor } from '../../core/money';
import { logger } from '../../observability/logger';
import { X402_FINALITY_MISMATCH_LOG_MESSAGE } from '../../observability/metric-names';
import {
  deferPendingSettlement,
  endFinalityCheck,
  failSettlement,
  listStalePendingSettlements,
  listUnfinalizedSettlements,
} from '../../store/x402-facilitator/x402.repository';
import type { Facilitator } from '../../x402/facilitator';
import { creditConfirmed, recordFee, successResponse } from './x402-credit';

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
