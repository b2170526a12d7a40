/**
 * The ledger audit on a table that money keeps moving through (the daily run on AWS,
 * functions/ledger-audit/handler.ts). A Scan is not a snapshot: a transfer committed between the
 * reads of its two sides looks, to that one scan, like money created or lost. So an audit that
 * does not hold is run again after a pause, and the ledger is reported broken only when every
 * attempt finds it broken. A real break fails every attempt; the noise of a transfer in flight
 * does not survive a second scan taken a minute later, unless money moves all the time on the
 * same items (then the audit can cry wolf; an audit of a point-in-time export would not:
 * docs/operating/ledger-audit.md "The daily ledger audit").
 */
import { type LedgerAuditReport, runLedgerAudit } from './ledger-audit';

export interface LiveAuditOptions {
  /** Audits at most this many times. */
  attempts: number;
  /** Waits this long between attempts (ms). */
  pauseMs: number;
  /** Parallel Scan segments per attempt. */
  segments?: number;
  /** Time left to run (ms), e.g. Lambda's getRemainingTimeInMillis: no attempt starts that would not finish. */
  timeLeftMs?: () => number;
  /** One audit (the table's by default). */
  audit?: (opts: { segments?: number }) => Promise<LedgerAuditReport>;
  sleep?: (ms: number) => Promise<void>;
}

export type LiveAuditReport = LedgerAuditReport & {
  /** Audits run: 1 when the first held. */
  attempts: number;
};

/** The first report that holds, or, when none did, the last one (with how many were run). */
export async function auditLiveLedger(opts: LiveAuditOptions): Promise<LiveAuditReport> {
  const audit = opts.audit ?? runLedgerAudit;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let attempts = 0;
  for (;;) {
    const started = Date.now();
    const report = await audit({ ...(opts.segments ? { segments: opts.segments } : {}) });
    attempts += 1;
    if (report.ok || attempts >= opts.attempts) return { ...report, attempts };
    // Another attempt only if it can finish: as long as this one took, with half again to spare.
    const needed = opts.pauseMs + 1.5 * (Date.now() - started);
    if (opts.timeLeftMs && opts.timeLeftMs() < needed) return { ...report, attempts };
    await sleep(opts.pauseMs);
  }
}
