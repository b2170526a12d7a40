/**
 * The x402 `payment-identifier` extension on the facilitator (docs/x402.md, "Payment identifiers").
 * One item per identifier an agent was asked about (`keys.x402PaymentIdentifier`, scoped by the
 * agent: the spec asks a facilitator to scope identifiers by its account), binding it to the
 * fingerprint of the first payment it came with, and keeping the first verify answer given for it.
 * Both are conditional writes; the item lives IDEMPOTENCY_TTL_SECONDS, as an Idempotency-Key does.
 * It holds no money and is never part of the money's transaction: settle binds before it claims,
 * and the claim and the credit stay what they were (x402.repository.ts).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import { db } from '../client';
import { keys, TTL_ATTRIBUTE } from '../table';
import { conditionalWrite, outcome } from '../transact';

/** What an identifier is bound to: the first payment's fingerprint, and the first verify answer (JSON) once there is one. */
export interface PaymentIdentifierBinding {
  fingerprint: string;
  verifyResponse?: string;
}

const nowSeconds = (now: Date) => Math.floor(now.getTime() / 1000);

/** A stored item as a live binding; undefined when absent or past its TTL (TTL deletion lags). */
function toBinding(item: Record<string, unknown> | undefined, now: Date): PaymentIdentifierBinding | undefined {
  if (!item) return undefined;
  if (typeof item[TTL_ATTRIBUTE] === 'number' && (item[TTL_ATTRIBUTE] as number) < nowSeconds(now)) return undefined;
  return {
    fingerprint: String(item.fingerprint),
    ...(typeof item.verifyResponse === 'string' ? { verifyResponse: item.verifyResponse } : {}),
  };
}

async function getBinding(agentId: string, id: string, now: Date): Promise<PaymentIdentifierBinding | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: config().TABLE_NAME, Key: keys.x402PaymentIdentifier(agentId, id), ConsistentRead: true }),
  );
  return toBinding(out.Item, now);
}

/**
 * Binds `id` to the payment whose fingerprint is `fingerprint`, unless it is bound already: then
 * the existing binding (whose fingerprint the caller compares). Of concurrent first requests with
 * one identifier, exactly one binds it.
 */
export async function bindPaymentIdentifier(
  agentId: string,
  id: string,
  fingerprint: string,
  now: Date,
): Promise<PaymentIdentifierBinding> {
  for (let round = 0; round < 3; round++) {
    const result = await conditionalWrite(
      {
        Put: {
          TableName: config().TABLE_NAME,
          Item: {
            ...keys.x402PaymentIdentifier(agentId, id),
            type: 'X402PaymentIdentifier',
            agentId,
            paymentIdentifier: id,
            fingerprint,
            createdAt: now.toISOString(),
            [TTL_ATTRIBUTE]: nowSeconds(now) + config().IDEMPOTENCY_TTL_SECONDS,
          },
          ConditionExpression: 'attribute_not_exists(PK) OR #ttl < :now',
          ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ':now': nowSeconds(now) },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      (old) => outcome(old),
    );
    if (result.committed) return { fingerprint };
    const existing = toBinding(result.outcome, now) ?? (await getBinding(agentId, id, now));
    if (existing) return existing;
    // Expired between the write and the read: the identifier is free again.
  }
  throw new Error('payment identifier binding did not settle in three rounds');
}

/**
 * Keeps `response` as the identifier's first verify answer, unless one is kept already (a racing
 * verify's): returns the one kept, which is what every verify with this identifier answers.
 */
export async function keepFirstVerify(agentId: string, id: string, fingerprint: string, response: string, now: Date): Promise<string> {
  const result = await conditionalWrite(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.x402PaymentIdentifier(agentId, id),
        UpdateExpression: 'SET verifyResponse = :response',
        ConditionExpression: 'attribute_exists(PK) AND fingerprint = :fingerprint AND attribute_not_exists(verifyResponse)',
        ExpressionAttributeValues: { ':response': response, ':fingerprint': fingerprint },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    (old) => outcome(old),
  );
  if (result.committed) return response;
  const existing = toBinding(result.outcome, now) ?? (await getBinding(agentId, id, now));
  // Gone (expired) or rebound to another payment in between: this answer stands on its own.
  return existing?.fingerprint === fingerprint && existing.verifyResponse !== undefined ? existing.verifyResponse : response;
}
