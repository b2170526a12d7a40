/**
 * The operator's refunds in the ledger audit (docs/lifecycle.md "The operator returns a disabled
 * agent's earnings"): a charge keeps what the operator gave back (`operatorRefundedAmount`) apart
 * from its refunds in all (`refundedAmount`, which the money equations use). The audit holds the
 * one against the other: real refunds (the agent's and the operator's, through the use cases) keep
 * it balanced; an operator's share that passes the charge's refunds, or one on a purchase, fails it
 * and names the charge.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { runLedgerAudit } from '../../functions/audit/ledger-audit';
import { config } from '../../functions/config';
import { hashKey } from '../../functions/core/keys';
import { scanLedgerItems } from '../../functions/store/audit/audit.repository';
import { db } from '../../functions/store/client';
import { updateAgentEnabled } from '../../functions/use-cases/identity/agents';
import {
  createCharge,
  createUserWithKey,
  creditUserBalance,
  refundCharge,
  refundChargeByOperator,
  registerAgent,
} from '../support/answers';
import { createTestTable } from '../support/table';

let chargeKey: Record<string, unknown> = {};
let chargeId = '';
let agentId = '';

beforeAll(async () => {
  await createTestTable();
  const user = (await createUserWithKey()).body as { id: string; userKey: string };
  await creditUserBalance({ userId: user.id, idempotencyKey: 'c1', amount: 50_00, currency: 'USD' });
  const registered = (await registerAgent({ name: 'refunded', email: 'a@example.com', website: 'https://example.com' })).body as {
    agentId: string;
    apiKey: string;
  };
  agentId = registered.agentId;
  await updateAgentEnabled(agentId, true);
  const agent = { id: agentId, keyHash: hashKey(registered.apiKey) };
  const charged = await createCharge({
    agent,
    userId: user.id,
    userKeyHash: hashKey(user.userKey),
    baseUrl: 'http://127.0.0.1',
    idempotencyKey: 'k1',
    amount: 10_00,
    currency: 'USD',
    description: 'work',
  });
  // A money movement answers with the bytes it stored (rawBody), so replays are byte-identical.
  chargeId = (JSON.parse(charged.rawBody ?? '{}') as { id: string }).id;
  expect(chargeId).toMatch(/^c/);
  // 1.00 back by the agent, then 3.00 by the operator: 4.00 refunded, 3.00 of it the operator's.
  expect((await refundCharge({ agent, chargeId, idempotencyKey: 'r1', amount: '1', baseUrl: '' })).statusCode).toBe(200);
  expect((await refundChargeByOperator({ agentId, chargeId, idempotencyKey: 'r2', amount: '3', baseUrl: '' })).statusCode).toBe(200);
});

async function chargeItemKey(): Promise<Record<string, unknown>> {
  if (chargeKey.PK) return chargeKey;
  const item = (await scanLedgerItems()).charges.find((c) => c.SK === chargeId);
  if (!item) throw new Error('the charge item is not in the scan');
  chargeKey = { PK: item.PK, SK: item.SK };
  return chargeKey;
}

const setOnCharge = async (values: Record<string, unknown>) => {
  const names = Object.keys(values);
  await db().send(
    new UpdateCommand({
      TableName: config().TABLE_NAME,
      Key: await chargeItemKey(),
      UpdateExpression: `SET ${names.map((_, i) => `#n${i} = :v${i}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(names.map((n, i) => [`#n${i}`, n])),
      ExpressionAttributeValues: Object.fromEntries(names.map((n, i) => [`:v${i}`, values[n]])),
    }),
  );
};

describe("the audit holds the operator's refunds against the charge's", () => {
  it("passes after real refunds by the agent and the operator, the operator's share kept on the charge", async () => {
    const report = await runLedgerAudit();
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it("fails, naming the charge, when the operator's share passes the charge's refunds", async () => {
    await setOnCharge({ operatorRefundedAmount: 4_01 });
    try {
      const report = await runLedgerAudit();
      expect(report.ok).toBe(false);
      expect(report.problems).toEqual([`charge ${chargeId}: the operator refunded 4.01 USD but its refunds total 4`]);
    } finally {
      await setOnCharge({ operatorRefundedAmount: 3_00 });
    }
    expect((await runLedgerAudit()).ok).toBe(true);
  });

  it('fails when a purchase shows an operator refund (the operator cannot refund one)', async () => {
    await setOnCharge({ purchase: { requirements: { payTo: 'seller' } } });
    try {
      const report = await runLedgerAudit();
      expect(report.problems).toContain(`charge ${chargeId}: a purchase, but the operator refunded 3`);
    } finally {
      await db().send(
        new UpdateCommand({ TableName: config().TABLE_NAME, Key: await chargeItemKey(), UpdateExpression: 'REMOVE purchase' }),
      );
    }
    expect((await runLedgerAudit()).ok).toBe(true);
  });
});
