/**
 * PayPal webhook transmissions already received: one small TTL'd item per `paypal-transmission-id`,
 * claimed with a conditional put before PayPal is asked to verify the webhook, so a replayed
 * transmission is refused without a call to PayPal. The claim is released when the webhook turns
 * out not to be verified or could not be handled (PayPal retries then): the item is marked
 * `released`, not deleted, so the function that receives webhooks from the internet holds no
 * DeleteItem (docs/operating/least-privilege.md), and a released claim can be claimed again.
 * Items outlive the 5-minute freshness window by far; TTL removes them after a day.
 */
import { config } from '../../config';
import { keys } from '../table';
import { conditionalWrite, outcome } from '../transact';

const TRANSMISSION_TTL_SECONDS = 86_400;

/** True when this transmission id had not been received (it is now recorded). */
export async function claimTransmission(transmissionId: string, now: Date): Promise<boolean> {
  const result = await conditionalWrite(
    {
      Put: {
        TableName: config().TABLE_NAME,
        Item: {
          ...keys.paypalTransmission(transmissionId),
          type: 'PaypalTransmission',
          receivedAt: now.toISOString(),
          ttl: Math.floor(now.getTime() / 1000) + TRANSMISSION_TTL_SECONDS,
        },
        // Seen before and not released: a replay. A released claim (refused or not handled) is taken again.
        ConditionExpression: 'attribute_not_exists(PK) OR released = :released',
        ExpressionAttributeValues: { ':released': true },
      },
    },
    () => outcome(false),
  );
  return result.committed;
}

/** Forgets a claimed transmission (it was refused or not handled; PayPal may send it again). */
export async function releaseTransmission(transmissionId: string): Promise<void> {
  await conditionalWrite(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.paypalTransmission(transmissionId),
        UpdateExpression: 'SET released = :released',
        // Only a claim that exists: an UpdateItem would otherwise create a released stub.
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':released': true },
      },
    },
    // Gone already (TTL): nothing is held, PayPal's retry is claimed afresh.
    () => outcome('gone'),
  );
}
