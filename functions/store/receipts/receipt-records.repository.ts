/**
 * The records receipts are made from (use-cases/receipts): read strongly consistent, after the fact,
 * never in a movement's transaction. A charge's receipt needs two times the Charge leaves out (its
 * answers never show them): when a hold was captured (`settledAt`) and when the latest refund was
 * made (`refundedAt`); they are on the item.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import { agentOfChargeId } from '../../core/ids';
import type { SettledChargeRecord } from '../../core/receipts';
import type { X402PaymentRecord } from '../../core/x402';
import { toCharge } from '../charges/charge-read.repository';
import { db } from '../client';
import { GSI1, keys } from '../table';
import { toPaymentRecord } from '../x402-facilitator/x402.repository';

const optional = (item: Record<string, unknown>, name: 'settledAt' | 'refundedAt') =>
  typeof item[name] === 'string' ? { [name]: item[name] as string } : {};

/**
 * A charge (or a purchase's hold) by id alone, with its times: one GetItem where an id names its
 * agent, its GSI1 entry for an id of the earlier form (as store/charges getChargeById).
 */
export async function getChargeRecord(chargeId: string): Promise<SettledChargeRecord | undefined> {
  const agentId = agentOfChargeId(chargeId);
  let item: Record<string, unknown> | undefined;
  if (agentId !== undefined) {
    const out = await db().send(
      new GetCommand({ TableName: config().TABLE_NAME, Key: keys.charge(agentId, chargeId), ConsistentRead: true }),
    );
    item = out.Item;
  } else {
    const out = await db().send(
      new QueryCommand({
        TableName: config().TABLE_NAME,
        IndexName: GSI1.indexName,
        KeyConditionExpression: 'GSI1PK = :pk',
        ExpressionAttributeValues: { ':pk': keys.chargeIndex(chargeId).GSI1PK },
        Limit: 1,
      }),
    );
    item = out.Items?.[0];
  }
  return item ? { charge: toCharge(item), ...optional(item, 'settledAt'), ...optional(item, 'refundedAt') } : undefined;
}

/** One agent's credited x402 payment (`x402_…`); undefined for an unknown id or another agent's. */
export async function getX402PaymentRecord(agentId: string, paymentId: string): Promise<X402PaymentRecord | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: config().TABLE_NAME, Key: keys.x402Payment(agentId, paymentId), ConsistentRead: true }),
  );
  return out.Item ? toPaymentRecord(out.Item) : undefined;
}
