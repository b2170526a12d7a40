/**
 * Structured JSON logger (Powertools), one per container. Never given a key, a header map or a raw
 * body; errors go in through serializeError (./serialize-error.ts), which keeps their causes.
 *
 * It must work when the configuration does not: the error mapper logs with it on the way to a
 * 500. So it reads the configuration with `tryConfig`, and until that parses it logs at
 * Powertools' default level without a stage. The instance itself is never replaced (the request
 * context middleware holds it); a config reset only re-applies the level and stage.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { onConfigReset, tryConfig } from '../config';
import { SERVICE_NAME } from './metric-names';

let instance: Logger | undefined;
let configured = false;

export function logger(): Logger {
  if (!instance || !configured) {
    const cfg = tryConfig();
    if (!instance) {
      instance = new Logger({
        serviceName: SERVICE_NAME,
        ...(cfg ? { logLevel: cfg.LOG_LEVEL, persistentKeys: { stage: cfg.STAGE } } : {}),
      });
    } else if (cfg) {
      instance.setLogLevel(cfg.LOG_LEVEL);
      instance.appendPersistentKeys({ stage: cfg.STAGE });
    }
    configured = cfg !== undefined;
  }
  return instance;
}

onConfigReset(() => {
  configured = false;
});

/**
 * Middy middleware: every log line of an invocation carries the Lambda request id
 * (`function_request_id`, with `function_name` and `cold_start`) and, when given, the caller's
 * request id as `correlation_id` (API Gateway's, the one a client can quote). Keys appended during
 * the invocation are dropped after it, so nothing leaks into the next one.
 */
export function requestContext<TEvent, TResult>(
  correlationId?: (event: TEvent) => string | undefined,
): MiddlewareObj<TEvent, TResult, Error, Context>[] {
  const log = logger();
  const correlation: MiddlewareObj<TEvent, TResult, Error, Context> = {
    before: async (request) => {
      const id = correlationId?.(request.event);
      if (id) log.setCorrelationId(id);
    },
  };
  return [injectLambdaContext(log, { resetKeys: true }) as MiddlewareObj<TEvent, TResult, Error, Context>, correlation];
}
