/**
 * The test-ping allowance of one endpoint: one small item per endpoint holding the current window
 * (`windowStart`, epoch ms) and how many pings it has taken. A window opens at the first ping
 * after the last one ended, so the limit is exact whatever the clock's minute. Each ping is one
 * conditional UpdateItem; opening a window is a second, conditional on no live window, so two
 * pings racing past a closed window cannot both open one. TTL'd a day after its window ends.
 */
import { config } from '../../config';
import { keys } from '../table';
import { conditionalWrite, outcome } from '../transact';

export interface TestWindowLimit {
  max: number;
  windowSeconds: number;
}

/**
 * Takes one ping from the endpoint's allowance. Returns undefined when taken, or the seconds until
 * the live window ends when it is used up (nothing was written then).
 */
export async function takeTestEventSlot(webhookId: string, now: Date, limit: TestWindowLimit): Promise<number | undefined> {
  const windowMs = limit.windowSeconds * 1000;
  // A window that started after this is still live.
  const liveAfter = now.getTime() - windowMs;
  for (let attempt = 0; attempt < 3; attempt++) {
    const counted = await conditionalWrite(
      {
        Update: {
          TableName: config().TABLE_NAME,
          Key: keys.webhookTestWindow(webhookId),
          UpdateExpression: 'SET #count = #count + :one',
          // A live window with room left.
          ConditionExpression: '#start > :liveAfter AND #count < :max',
          ExpressionAttributeNames: { '#count': 'count', '#start': 'windowStart' },
          ExpressionAttributeValues: { ':one': 1, ':liveAfter': liveAfter, ':max': limit.max },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      (old) => outcome(typeof old?.windowStart === 'number' ? old.windowStart : undefined),
    );
    if (counted.committed) return undefined;
    const start = counted.outcome;
    if (start !== undefined && start > liveAfter) return (start + windowMs - now.getTime()) / 1000;
    // No window, or it ended: open one with this ping.
    const opened = await conditionalWrite(
      {
        Update: {
          TableName: config().TABLE_NAME,
          Key: keys.webhookTestWindow(webhookId),
          UpdateExpression: 'SET #start = :now, #count = :one, #type = :type, #ttl = :ttl',
          // Nobody opened a live one meanwhile.
          ConditionExpression: 'attribute_not_exists(#start) OR #start <= :liveAfter',
          ExpressionAttributeNames: { '#count': 'count', '#start': 'windowStart', '#type': 'type', '#ttl': 'ttl' },
          ExpressionAttributeValues: {
            ':now': now.getTime(),
            ':one': 1,
            ':liveAfter': liveAfter,
            ':type': 'WebhookTestWindow',
            ':ttl': Math.floor((now.getTime() + windowMs) / 1000) + 86_400,
          },
        },
      },
      // Another ping opened it first: count against that window.
      () => outcome('opened by another'),
    );
    if (opened.committed) return undefined;
  }
  // Three races lost in a row: treat as used up for now.
  return 1;
}
