/**
 * One page of a partition newest first (its sort key is the item's time-ordered id), continuing
 * after `after` when given: one strongly consistent Query of `limit + 1` items, the extra one only
 * saying whether another page exists, so the last page has no cursor.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { db } from './client';

export async function newestFirstPage<T extends { id: string }>(
  pk: string,
  opts: { limit: number; after?: string },
  read: (item: Record<string, unknown>) => T,
): Promise<{ items: T[]; lastId: string | undefined }> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      ScanIndexForward: false,
      ConsistentRead: true,
      Limit: opts.limit + 1,
      ...(opts.after ? { ExclusiveStartKey: { PK: pk, SK: opts.after } } : {}),
    }),
  );
  const all = (out.Items ?? []).map(read);
  const items = all.slice(0, opts.limit);
  return { items, lastId: all.length > opts.limit ? items[items.length - 1]?.id : undefined };
}
