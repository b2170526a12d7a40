import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { loadConfig } from '../config';
import { withRequestContext } from '../observability/lambda-handler';
import { SWEEPER_LAG_METRIC } from '../observability/metric-names';
import { flushMetrics, metrics } from '../observability/metrics';
import { expireDueCharges } from '../use-cases/charges/expiry';

loadConfig();

/**
 * Scheduled (EventBridge) sweep: PENDING charges past `expiresAt` become EXPIRED, holds go back.
 * Then the SweeperLagSeconds gauge (how late the oldest due charge was) that lib/monitoring.ts alarms on.
 */
export const handler = withRequestContext(async () => {
  const report = await expireDueCharges();
  metrics().addMetric(SWEEPER_LAG_METRIC, MetricUnit.Seconds, report.lagSeconds);
  flushMetrics();
  return report;
});
