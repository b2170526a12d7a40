/**
 * An operation's Lambda handler (functions/operations/): the function's own configuration checked
 * at init (its registry entry's needs), then the house middy stack around `execute`. A route's
 * handler file is one line: `export const handler = lambdaHandler(someOperation)`.
 */
import { loadConfig } from '../config';
import { httpHandler, type RouteHandler } from '../http/handler';
import { publicBaseUrl } from '../http/request';
import { execute } from '../operations/execute';
import type { Operation } from '../operations/operation';

// biome-ignore lint/suspicious/noExplicitAny: an operation of any credentials, key rule, input and outcome.
export function lambdaHandler(op: Operation<any, any, any, any, any>): RouteHandler {
  // Refuses to start (fails the init) without what this route needs beyond the shared configuration.
  loadConfig({ require: op.needs });
  return httpHandler((req) => execute(op, req, { baseUrl: publicBaseUrl }));
}
