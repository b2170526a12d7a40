/**
 * DynamoDB clients: one per container, built on first use, keep-alive on. Every request is
 * counted by command name so benchmarks and tests can prove how many round trips an operation
 * costs (the counter is a plain in-memory map; it costs nothing measurable).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  DynamoDBClient,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ThrottlingException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config, onConfigReset } from '../config';
import { ServiceBusyError } from '../core/errors';

const counts = new Map<string, number>();
/** Work that runs in this process but stands for another function (see `uncounted`). */
const elsewhere = new AsyncLocalStorage<true>();

/**
 * Runs `work` without counting its requests. The local stack runs other Lambdas' handlers (the
 * webhook dispatcher and delivery worker) in the same process and on the same client; their
 * requests are theirs, not the cost of whatever request a test or the bench is counting.
 */
export const uncounted = <T>(work: () => Promise<T>): Promise<T> => elsewhere.run(true, work);

let doc: DynamoDBDocumentClient | undefined;

/** The shared document client. */
export function db(): DynamoDBDocumentClient {
  if (!doc) {
    const cfg = config();
    const raw = new DynamoDBClient({
      region: cfg.AWS_REGION,
      ...(cfg.DYNAMODB_ENDPOINT ? { endpoint: cfg.DYNAMODB_ENDPOINT } : {}),
      // DynamoDB Local accepts any credentials but the SDK insists on having some.
      ...(cfg.LOCAL ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
      maxAttempts: 4,
      requestHandler: { httpAgent: { keepAlive: true }, httpsAgent: { keepAlive: true }, requestTimeout: 5_000 },
    });
    // The SDK's per-request log line: we give it no logger, yet its no-op `info` still has the
    // input and output filtered for secrets on every request (about 8% of the client's CPU in a
    // profile of the race tests). Powertools logs what we want logged.
    raw.middlewareStack.remove('loggerMiddleware');
    raw.middlewareStack.add(
      (next, context) => (args) => {
        const name = context.commandName ?? 'unknown';
        if (!elsewhere.getStore()) counts.set(name, (counts.get(name) ?? 0) + 1);
        return next(args);
      },
      { step: 'initialize', name: 'countRequests' },
    );
    raw.middlewareStack.add(
      (next, context) => async (args) => {
        try {
          return await next(args);
        } catch (error) {
          // Throttling, or a table that did not answer in time, outlasting the SDK's own retries:
          // the caller may retry later (503 with Retry-After), it is not a bug (500). Transactions
          // retry throttling themselves first (transact.ts).
          if (context.commandName !== 'TransactWriteItemsCommand' && (isThrottling(error) || isUnanswered(error))) {
            throw new ServiceBusyError(error);
          }
          throw error;
        }
      },
      { step: 'initialize', name: 'throttlingIsServiceBusy' },
    );
    doc = DynamoDBDocumentClient.from(raw, { marshallOptions: { removeUndefinedValues: true } });
  }
  return doc;
}

/** DynamoDB refused the request for its rate: retryable, never a bug. */
export function isThrottling(error: unknown): boolean {
  return (
    error instanceof ProvisionedThroughputExceededException || error instanceof ThrottlingException || error instanceof RequestLimitExceeded
  );
}

/** Node's codes for a connection that broke or never opened. */
const UNANSWERED_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT']);

/**
 * The request got no answer: the SDK's socket or request timeout (`TimeoutError`) or a broken
 * connection. A write may or may not have landed, so the answer is 503 and the caller's retry with
 * the same Idempotency-Key finds out which (a replay answers the first outcome).
 */
export function isUnanswered(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return error.name === 'TimeoutError' || (typeof code === 'string' && UNANSWERED_CODES.has(code));
}

/** Requests sent since the last reset, by command name (e.g. `TransactWriteItemsCommand`). */
export function dynamoRequestCounts(): Record<string, number> {
  return Object.fromEntries(counts);
}

export function resetDynamoRequestCounts(): void {
  counts.clear();
}

// resetForTests (config.ts): drop the client so the next call re-reads the configuration.
onConfigReset(() => {
  doc?.destroy();
  doc = undefined;
});
