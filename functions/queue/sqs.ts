/**
 * What every queue module shares: an SQS client built once per container (keep-alive; local SQS
 * when SQS_ENDPOINT is set), dropped on a config reset, and the reading of a message body
 * against its schema, where anything else is a poison message.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import type * as z from 'zod';
import { config, onConfigReset } from '../config';

/** A lazily built client with its own retry budget (a request waiting on it wants fewer, shorter tries). */
export function lazySqsClient(options: { maxAttempts: number; requestTimeoutMs: number }): () => SQSClient {
  let client: SQSClient | undefined;
  // resetForTests (config.ts): drop the client so the next send re-reads the configuration.
  onConfigReset(() => {
    client?.destroy();
    client = undefined;
  });
  return () => {
    if (!client) {
      const cfg = config();
      client = new SQSClient({
        region: cfg.AWS_REGION,
        ...(cfg.SQS_ENDPOINT ? { endpoint: cfg.SQS_ENDPOINT } : {}),
        ...(cfg.LOCAL ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
        maxAttempts: options.maxAttempts,
        requestHandler: {
          httpAgent: { keepAlive: true },
          httpsAgent: { keepAlive: true },
          requestTimeout: options.requestTimeoutMs,
        },
      });
    }
    return client;
  };
}

/** A message body read against its schema; undefined for a poison message (not JSON, or not the shape). */
export function parseMessage<S extends z.ZodType>(schema: S, body: string): z.infer<S> | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
