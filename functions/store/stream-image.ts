/**
 * A table stream record's images (DynamoDB's attribute-value JSON) to and from plain items, so the
 * stream's readers (the webhook dispatcher, the kill switch's fan-out, the re-dispatch) need no
 * DynamoDB library of their own: the marshalling format is the store's business.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';

/** The item an image holds. */
export function itemOfImage(image: Record<string, unknown>): Record<string, unknown> {
  return unmarshall(image as Record<string, AttributeValue>);
}

/** The image a stream record would carry for `item` (undefined attributes left out). */
export function imageOfItem(item: Record<string, unknown>): Record<string, unknown> {
  return marshall(item, { removeUndefinedValues: true });
}
