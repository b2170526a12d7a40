/**
 * Expiry: a PENDING charge nobody approved, declined, captured or released before `expiresAt`
 * becomes EXPIRED and its hold returns to the user. The sweeper finds due charges through the
 * pending markers' index (GSI1 `PENDING_EXPIRY#<k>`, 16 partitions sorted by expiry, and the legacy
 * `PENDING_EXPIRY`), never a Scan, so a run costs one Query per partition plus one transaction per
 * due charge, whatever the table holds; the oldest due go first, at most SWEEP_MAX_PER_RUN.
 */
import { config } from '../../config';
import { ChargeNotPendingError } from '../../core/errors';
import { logger } from '../../observability/logger';
import { serializeError } from '../../observability/serialize-error';
import { chargeBeforeSettling, listDuePending } from '../../store/charges/charge-pending.repository';
import { type Settlement, settlePending } from '../../store/charges/charge-settlement.repository';
import { settlementEvents } from '../events/events';
import { closeTab } from '../tabs/close';

export interface SweepReport {
  due: number;
  expired: number;
  /** Already settled by approve/decline/capture/release in the meantime (the index lags). */
  settled: number;
  failed: number;
  /**
   * How long past its `expiresAt` the oldest due charge was when the run started (0 when none was
   * due): the sweeper's lag. About the schedule's minute when all is well; it grows when the
   * sweeper falls behind (more due than SWEEP_MAX_PER_RUN) or a charge keeps failing to expire.
   */
  lagSeconds: number;
}

/** Expires every PENDING charge due at `now` (up to SWEEP_MAX_PER_RUN). */
export async function expireDueCharges(now = new Date()): Promise<SweepReport> {
  const report: SweepReport = { due: 0, expired: 0, settled: 0, failed: 0, lagSeconds: 0 };
  const due = await listDuePending(now, config().SWEEP_MAX_PER_RUN);
  report.due = due.length;
  const oldest = Math.min(...due.map((p) => Date.parse(p.expiresAt)).filter((t) => !Number.isNaN(t)));
  report.lagSeconds = Number.isFinite(oldest) ? Math.max(0, Math.round((now.getTime() - oldest) / 1000)) : 0;
  for (const pending of due) {
    const { chargeId } = pending;
    try {
      // A tab's hold: the tab closes at what it used (captured), the rest released (DESIGN §29).
      if (pending.tabId !== undefined) {
        await closeTab(pending.tabId, { service: 'expiry' });
        report.expired++;
        continue;
      }
      const expiry: Settlement = { kind: 'return', status: 'EXPIRED', failureReason: null };
      // charge.expired to the agent and the user, written with the expiry (the marker carries the charge).
      const before = await chargeBeforeSettling(pending);
      await settlePending(pending, expiry, now, { events: before ? settlementEvents(before, expiry, now) : [] });
      report.expired++;
    } catch (error) {
      if (error instanceof ChargeNotPendingError) {
        report.settled++;
        continue;
      }
      // One charge's trouble never stops the others; it is due again on the next run.
      report.failed++;
      logger().error('could not expire a pending charge', { chargeId, error: serializeError(error) });
    }
  }
  return report;
}
