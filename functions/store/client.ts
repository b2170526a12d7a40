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
          // Throttling that outlasted the SDK's own retries: the caller may retry later (503 with
          // Retry-After), it is not a bug (500). Transactions retry it themselves first (transact.ts).
          if (context.commandName !== 'TransactWriteItemsCommand' && isThrottled(error)) throw new ServiceBusyError(error);
          throw error;
        }
      },
      { step: 'initialize', name: 'throttlingIsServiceBusy' },
    );
    doc = DynamoDBDocumentClient.from(raw, { marshallOptions: { removeUndefinedValues: true } });
  }
  return doc;
}

function isThrottled(error: unknown): boolean {
  return (
    error instanceof ProvisionedThroughputExceededException || error instanceof ThrottlingException || error instanceof RequestLimitExceeded
  );
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
