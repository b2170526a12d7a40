/**
 * The once-per-window marker of a grant's limit alerts (core/grant-alerts.ts, docs/webhooks.md
 * "Grant limit alerts"): the alert's event goes to the outbox in one transaction with a conditional
 * write of the window it is for on the grant item (`alertApproachingDaily = "2026-01-15"`), so
 * however many stream records (concurrent charges, a redelivered batch, a second crossing after a
 * release) ask for the same alert in the same window, exactly one event is written. Written by the
 * webhook dispatcher, after the charge: never on a charge's own path.
 */
import { config } from '../../config';
import type { OutboxEvent } from '../../core/events';
import { outboxPut } from '../events/outbox';
import { keys } from '../table';
import { ConditionFailedError, type TransactItem, transactWrite } from '../transact';

/** Writes `event` unless the grant already records an alert of `marker` for `window`; true when it was written now. */
export async function sendGrantAlertOnce(
  grant: { userId: string; grantId: string },
  marker: string,
  window: string,
  event: OutboxEvent,
  now: Date,
): Promise<boolean> {
  const outbox = outboxPut([event], now);
  if (!outbox) return false;
  const mark: TransactItem = {
    Update: {
      TableName: config().TABLE_NAME,
      Key: keys.grant(grant.userId, grant.grantId),
      UpdateExpression: 'SET #marker = :window',
      // Once per window: the first writer of this window wins; an older window's mark is replaced.
      ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(#marker) OR #marker <> :window)',
      ExpressionAttributeNames: { '#marker': marker },
      ExpressionAttributeValues: { ':window': window },
    },
  };
  try {
    await transactWrite([mark, outbox]);
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError) return false;
    throw error;
  }
}
