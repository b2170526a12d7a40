/**
 * Per-address counters of the console's sign-in failures and sign-ups (DESIGN §21): one item per
 * address, action and fixed window, raised by one UpdateItem (ADD is atomic, so parallel tries all
 * count) and TTL'd after its window.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import { batchGetConsistent } from '../batch-get';
import { db } from '../client';
import { keys, TTL_ATTRIBUTE } from '../table';

export interface RateWindow {
  action: string;
  address: string;
  /** The window's start, epoch seconds (a multiple of its length). */
  start: number;
  seconds: number;
}

/** How many this window and the one before it hold, together (one BatchGetItem). */
export async function readAttempts(window: RateWindow): Promise<number> {
  const items = await batchGetConsistent([
    keys.consoleRate(window.action, window.address, window.start),
    keys.consoleRate(window.action, window.address, window.start - window.seconds),
  ]);
  return items.reduce((sum, item) => sum + (typeof item.count === 'number' ? item.count : 0), 0);
}

/** How many this window alone holds (one read). */
export async function readWindow(window: RateWindow): Promise<number> {
  const [item] = await batchGetConsistent([keys.consoleRate(window.action, window.address, window.start)]);
  return typeof item?.count === 'number' ? item.count : 0;
}

/** Counts one more and answers the window's new count. */
export async function countAttempt(window: RateWindow): Promise<number> {
  const out = await db().send(
    new UpdateCommand({
      TableName: config().TABLE_NAME,
      Key: keys.consoleRate(window.action, window.address, window.start),
      UpdateExpression: 'ADD #count :one SET #type = :type, #ttl = :ttl',
      ExpressionAttributeNames: { '#count': 'count', '#type': 'type', '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: { ':one': 1, ':type': 'ConsoleRate', ':ttl': window.start + window.seconds + 60 },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(out.Attributes?.count ?? 1);
}
