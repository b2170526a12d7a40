/**
 * CloudWatch metrics (Powertools, embedded metric format on stdout): one Metrics instance per
 * container and the middy middleware that flushes what a request recorded (the names every
 * emitter and every alarm share are in metric-names.ts). Off locally and in tests (LOCAL=1,
 * LOG_LEVEL=SILENT, or
 * Powertools' own POWERTOOLS_METRICS_DISABLED), so nothing reaches their stdout.
 */
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { MiddlewareObj } from '@middy/core';
import { config, tryConfig } from '../config';
import { METRICS_NAMESPACE, SERVICE_NAME } from './metric-names';

let instance: Metrics | undefined;
/**
 * Whether anything may have been recorded since the last flush: every recording goes through
 * `metrics()`, so a request that never called it (every API request with metrics off) has
 * nothing to flush, and its flush skips Powertools' store lookup.
 */
let touched = false;

/** The container's Metrics (dimensions service + stage). Record with `metrics().addMetric(…)`. */
export function metrics(): Metrics {
  instance ??= new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME, defaultDimensions: { stage: config().STAGE } });
  touched = true;
  return instance;
}

/** Whether this process publishes metrics at all. Metrics never fail a request: bad config means off. */
export function metricsEnabled(): boolean {
  const cfg = tryConfig();
  return cfg !== undefined && !cfg.LOCAL && cfg.LOG_LEVEL !== 'SILENT';
}

/**
 * Writes what was recorded, if anything (Powertools warns on every empty flush, so an empty
 * one is skipped), and forgets it otherwise so nothing leaks into the next invocation.
 */
export function flushMetrics(): void {
  if (!touched) return;
  touched = false;
  if (!instance?.hasStoredMetrics()) return;
  if (metricsEnabled()) instance.publishStoredMetrics();
  else instance.clearMetrics();
}

/**
 * Middy middleware: a ColdStart metric on a container's first request (Powertools knows which
 * one that is), and the request's metrics flushed after the response, success or failure.
 */
export function metricsMiddleware<TEvent, TResult>(): MiddlewareObj<TEvent, TResult> {
  return {
    before: async (request) => {
      if (metricsEnabled()) metrics().captureColdStartMetric(request.context.functionName);
    },
    after: async () => flushMetrics(),
    onError: async () => flushMetrics(),
  };
}
