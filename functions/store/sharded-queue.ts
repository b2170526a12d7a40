/**
 * A work list kept in GSI1 over several partitions (the sweeper's expiry queue, the top-up
 * watcher's list: DESIGN §18, no single hot index partition), each sorted by `<time>#<id>`. A read
 * is ONE Query per partition for its `limit` first entries, merged: the `limit` first of them all,
 * exactly as one partition would have listed them, so a run's bound and its oldest-first order hold.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { db } from './client';
import { GSI1 } from './table';

type Item = Record<string, unknown>;

/** The first `limit` entries (lowest GSI1SK) of the queue's `partitions`, below `before` when given. */
export async function readShardedQueue(partitions: readonly string[], opts: { limit: number; before?: string }): Promise<Item[]> {
  const reads = await Promise.all(
    partitions.map(async (pk) => {
      const out = await db().send(
        new QueryCommand({
          TableName: config().TABLE_NAME,
          IndexName: GSI1.indexName,
          KeyConditionExpression: opts.before === undefined ? 'GSI1PK = :pk' : 'GSI1PK = :pk AND GSI1SK < :before',
          ExpressionAttributeValues: { ':pk': pk, ...(opts.before === undefined ? {} : { ':before': opts.before }) },
          Limit: opts.limit,
        }),
      );
      return out.Items ?? [];
    }),
  );
  const key = (item: Item) => String(item.GSI1SK);
  return reads
    .flat()
    .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))
    .slice(0, opts.limit);
}
