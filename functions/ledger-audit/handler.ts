import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { auditLiveLedger } from '../audit/live-audit';
import { loadConfig } from '../config';
import { withRequestContext } from '../observability/lambda-handler';
import { logger } from '../observability/logger';
import { LEDGER_AUDIT_PROBLEMS_METRIC } from '../observability/metric-names';
import { flushMetrics, metrics } from '../observability/metrics';

loadConfig();

/** Up to three scans a minute apart (functions/audit/live-audit.ts), each in parallel segments. */
const ATTEMPTS = 3;
const PAUSE_MS = 60_000;
const SEGMENTS = 4;
/** Problems named in the log line (the report holds them all; a broken ledger can name thousands). */
const LOGGED_PROBLEMS = 50;

/**
 * Scheduled (EventBridge, daily): the ledger audit that `npm run audit` runs, on the live table.
 * Emits LedgerAuditProblems (0 when the ledger holds), which lib/monitoring.ts alarms on, missing
 * data included: an audit that did not finish emits nothing, and a day without a data point alarms
 * too. A broken ledger is an ERROR log line and the metric, not a thrown error (Lambda would retry
 * the whole scan twice for nothing).
 */
export const handler = withRequestContext(async (_event: unknown, context) => {
  const report = await auditLiveLedger({
    attempts: ATTEMPTS,
    pauseMs: PAUSE_MS,
    segments: SEGMENTS,
    ...(context?.getRemainingTimeInMillis ? { timeLeftMs: () => context.getRemainingTimeInMillis() } : {}),
  });
  metrics().addMetric(LEDGER_AUDIT_PROBLEMS_METRIC, MetricUnit.Count, report.problems.length);
  flushMetrics();
  const summary = { ok: report.ok, attempts: report.attempts, problems: report.problems.length, counts: report.counts };
  if (report.ok) logger().info('ledger audit holds', summary);
  else {
    logger().error('ledger audit does not hold', {
      ...summary,
      currencies: report.currencies,
      firstProblems: report.problems.slice(0, LOGGED_PROBLEMS),
    });
  }
  return summary;
});
