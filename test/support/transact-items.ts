import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { TransactItem } from '../../functions/store/transact';

/**
 * A transaction item in the document client's form: a middleware that records TransactWriteItems
 * may see them marshalled (`{S: …}`), and tests compare them as the store wrote them.
 */
export function plainTransactItem(item: TransactItem): TransactItem {
  const out = structuredClone(item) as Record<string, Record<string, unknown>>;
  for (const body of Object.values(out)) {
    for (const field of ['Item', 'Key', 'ExpressionAttributeValues']) {
      const v = body[field] as Record<string, unknown> | undefined;
      if (v && Object.values(v).every((a) => a !== null && typeof a === 'object' && Object.keys(a as object).length === 1)) {
        try {
          body[field] = unmarshall(v as Record<string, AttributeValue>);
        } catch {
          // already plain
        }
      }
    }
  }
  return out as TransactItem;
}
