import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { requestContext } from './logger';

/**
 * Wraps a non-HTTP Lambda function (payout worker, reconciler) so its log lines carry the Lambda
 * request id. The local runner calls these without a context, as it does the routes.
 */
export function withRequestContext<TEvent, TResult>(
  fn: (event: TEvent, context: Context) => Promise<TResult>,
): (event: TEvent, context?: Context) => Promise<TResult> {
  const wrapped = middy<TEvent, TResult>()
    .use(requestContext<TEvent, TResult>())
    .handler((event, context) => fn(event, context));
  return (event, context) => wrapped(event, context ?? ({} as Context));
}
