import { BatchGetCommand, type BatchGetCommandOutput } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { db } from './client';

type Key = Record<string, unknown>;

/**
 * Strongly consistent BatchGetItem of up to 100 keys. DynamoDB may hand back some keys as
 * unprocessed under load; those are asked for again (a few times), never silently dropped.
 */
export async function batchGetConsistent(wanted: Key[]): Promise<Record<string, unknown>[]> {
  const table = config().TABLE_NAME;
  const items: Record<string, unknown>[] = [];
  let pending: Key[] = wanted;
  for (let attempt = 0; pending.length > 0 && attempt < 5; attempt++) {
    const out: BatchGetCommandOutput = await db().send(
      new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: true } } }),
    );
    items.push(...(out.Responses?.[table] ?? []));
    pending = out.UnprocessedKeys?.[table]?.Keys ?? [];
  }
  if (pending.length > 0) throw new Error('batch read left keys unprocessed');
  return items;
}
