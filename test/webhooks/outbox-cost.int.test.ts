/**
 * What the outbox costs each kind of change: its one extra transaction item, written alone in a
 * TransactWriteItems against DynamoDB Local so its write units show on their own (docs/webhooks.md
 * "Cost"): one item per change; with typical text under 2 KB, with the longest text a charge may
 * carry (both parties' events repeat it) under 3 KB.
 */
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { topupView } from '../../functions/contracts/views';
import type { Charge } from '../../functions/core/charges';
import { newChargeId, newTopupId } from '../../functions/core/ids';
import { db } from '../../functions/store/client';
import { outboxPut } from '../../functions/store/events/outbox';
import { TOKEN_PLACEHOLDER } from '../../functions/use-cases/charges/approval-token';
import { chargeEvents, chargeRefundedEvents, settlementEvents, topupCompletedEvents } from '../../functions/use-cases/events/events';
import { createTestTable } from '../support/table';

beforeAll(async () => {
  await createTestTable();
});

const now = new Date();
const base: Charge = {
  id: newChargeId('a01jhx3k6v1f8q2n7c9m4p5r6s7'),
  agentId: 'a01jhx3k6v1f8q2n7c9m4p5r6s7',
  userId: 'u01jhx3k6v1f8q2n7c9m4p5r6s7',
  idempotencyKey: 'k'.repeat(64),
  amount: 123_456,
  currency: 'USD',
  description: 'forecast for Lisbon',
  status: 'SUCCESS',
  createdAt: now.toISOString(),
  agentName: 'Forecaster',
};
/** The longest text a charge may carry: a 255-character description, a 100-character agent name. */
const longest: Charge = { ...base, description: 'd'.repeat(255), agentName: 'n'.repeat(100), idempotencyKey: 'k'.repeat(255) };

async function writeUnits(events: ReturnType<typeof chargeEvents>): Promise<{ units: number; bytes: number }> {
  const put = outboxPut(events, now)?.Put;
  if (!put) throw new Error('no outbox item');
  const out = await db().send(
    new TransactWriteCommand({ TransactItems: [{ Put: { TableName: put.TableName, Item: put.Item } }], ReturnConsumedCapacity: 'TOTAL' }),
  );
  return {
    units: (out.ConsumedCapacity ?? []).reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0),
    bytes: Buffer.byteLength(JSON.stringify(put.Item)),
  };
}

function rowsFor(charge: Charge) {
  const pending: Charge = { ...charge, status: 'PENDING', pendingReason: 'user_approval', expiresAt: now.toISOString() };
  return {
    'charge 201: charge.succeeded × (agent, user)': chargeEvents(charge, { now }),
    'charge 202: charge.pending + charge.approval_requested': chargeEvents(pending, {
      now,
      approvalUrl: `https://api.example.com/approve/${TOKEN_PLACEHOLDER}`,
    }),
    'refused 402: charge.failed × 2': chargeEvents({ ...charge, status: 'FAILED', failureReason: 'insufficient balance' }, { now }),
    'expiry: charge.expired × 2': settlementEvents(pending, { kind: 'return', status: 'EXPIRED', failureReason: null }, now),
    'refund: charge.refunded': chargeRefundedEvents({ ...charge, refundedAmount: 100 }, now),
    'top-up: topup.completed': topupCompletedEvents(
      charge.userId,
      topupView({
        id: newTopupId(),
        userId: charge.userId,
        currency: 'USD',
        status: 'COMPLETED',
        amount: 2500,
        externalId: 'CAPTURE-1',
        createdAt: now.toISOString(),
        expiresAt: now.toISOString(),
        completedAt: now.toISOString(),
        orderId: 'ORDER-1',
        approveUrl: 'https://www.sandbox.paypal.com/checkoutnow?token=ORDER-1',
      }),
      now,
    ),
  };
}

async function measure(charge: Charge) {
  const measured: Record<string, string> = {};
  let maxUnits = 0;
  let maxBytes = 0;
  for (const [name, events] of Object.entries(rowsFor(charge))) {
    const { units, bytes } = await writeUnits(events);
    measured[name] = `${units} units, ${bytes} bytes`;
    maxUnits = Math.max(maxUnits, units);
    maxBytes = Math.max(maxBytes, bytes);
  }
  return { measured, maxUnits, maxBytes };
}

it('each change adds one outbox item: under 2 KB with typical text, under 3 KB with the longest', async () => {
  const typical = await measure(base);
  const long = await measure(longest);
  // For docs/webhooks.md "Cost": DynamoDB Local's reported units per outbox item.
  console.log(JSON.stringify({ typical: typical.measured, longest: long.measured }, null, 2));
  expect(typical.maxBytes).toBeLessThan(2048);
  expect(typical.maxUnits).toBeLessThanOrEqual(8);
  expect(long.maxBytes).toBeLessThan(3072);
  expect(long.maxUnits).toBeLessThanOrEqual(12);
});
