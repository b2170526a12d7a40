/**
 * Attacks on refunds of x402 payments (DESIGN §28): an agent refunding another agent's payment (or
 * reading its refund), an Idempotency-Key replayed with another body, amounts that are negative,
 * zero, strings or finer than a micro-USDC (refused, never rounded), a payment id that names nothing,
 * and a payment whose payer is not a wallet the hot wallet can pay (an off-curve address, as a
 * program-derived smart wallet would be). Nothing is debited by any of them; the audit holds.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { type RefundSeller, useRefundFixture } from '../support/x402-refunds';

const t = useTestStack(
  { RECONCILE_PENDING_AFTER_SECONDS: '1', RECONCILE_PROCESSING_AFTER_SECONDS: '1' },
  { payouts: { visibilityTimeoutSeconds: 2, reconcileIntervalMs: 200 } },
);
const f = useRefundFixture(t);
auditAfterAll();

let seller: RefundSeller;
let paymentId: string;
beforeAll(async () => {
  seller = await f.seller();
  paymentId = await f.pay(seller);
});

describe('x402 refund attacks', () => {
  it("answers 404 for another agent's payment and refund, and for ids that name nothing", async () => {
    const other = await f.seller();
    expect(await f.refund(other.key, paymentId)).toMatchObject({ status: 404, body: { error: 'payment not found' } });
    expect(await f.refund(seller.key, 'x402_01jhx3k6v1f8q2n7c9m4p5r6s7')).toMatchObject({ status: 404 });
    expect(await f.refund(seller.key, '..%2F..%2Fwithdraw')).toMatchObject({ status: 404 });
    const mine = await f.refund(seller.key, paymentId, { body: { amount: 0.001 } });
    expect(mine.status).toBe(202);
    expect(await f.read(other.key, mine.body.id)).toMatchObject({ status: 404, body: { error: 'refund not found' } });
    expect(await f.read(seller.key, 'xr01jhx3k6v1f8q2n7c9m4p5r6s7')).toMatchObject({ status: 404 });
    // A withdrawal's payout id is no refund.
    expect(await f.read(seller.key, 'p01jhx3k6v1f8q2n7c9m4p5r6s7')).toMatchObject({ status: 404 });
    await f.untilFinal(seller.key, mine.body.id);
    expect(await f.usdcBalance(other.key)).toBe(0);
  });

  it('answers 422 to an Idempotency-Key replayed with another body, and moves nothing more', async () => {
    const key = `attack-${Date.now()}`;
    const first = await f.refund(seller.key, paymentId, { body: { amount: 0.001 }, idempotencyKey: key });
    expect(first.status).toBe(202);
    const balance = await f.usdcBalance(seller.key);
    expect((await f.refund(seller.key, paymentId, { body: { amount: 0.002 }, idempotencyKey: key })).status).toBe(422);
    expect((await f.refund(seller.key, paymentId, { idempotencyKey: key })).status).toBe(422);
    expect(await f.usdcBalance(seller.key)).toBe(balance);
    await f.untilFinal(seller.key, first.body.id);
  });

  it.each([
    ['negative', { amount: -0.001 }],
    ['zero', { amount: 0 }],
    ['finer than a micro-USDC', { amount: 0.0000001 }],
    ['a string', { amount: '0.001' }],
    ['an unknown field', { amount: 0.001, to: 'someone-else' }],
  ])('refuses an amount that is %s with 400, debiting nothing', async (_what, body) => {
    const balance = await f.usdcBalance(seller.key);
    const res = await f.refund(seller.key, paymentId, { body });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual(expect.any(String));
    expect(await f.usdcBalance(seller.key)).toBe(balance);
  });

  it('refuses without an Idempotency-Key, and without an agent key', async () => {
    const noKey = await t.call('POST', `/api/v1/agents/x402/payments/${paymentId}/refund`, { headers: { 'x-agent-key': seller.key } });
    expect(noKey.status).toBe(400);
    const noAgent = await t.call('POST', `/api/v1/agents/x402/payments/${paymentId}/refund`, { headers: { 'idempotency-key': 'k-1' } });
    expect(noAgent.status).toBe(401);
    const unknown = await f.refund('ag_live_00000000000000000000000000000000', paymentId);
    expect(unknown.status).toBe(401);
  });

  it('refuses a payment whose payer is not a wallet a refund can be sent to (400), debiting nothing', async () => {
    const payment = await f.pay(seller);
    // An off-curve address (a program-derived one, as a smart wallet's is): no key can sign for it,
    // and a transfer to its "token account" would lock the USDC away for good.
    const offCurve = 'E9nx6aL6PCcziQ6W2NT1K74psrrRHCgMqQ3UytKApKcC';
    await db().send(
      new UpdateCommand({
        TableName: config().TABLE_NAME,
        Key: keys.x402Payment(seller.id, payment),
        UpdateExpression: 'SET payer = :p',
        ExpressionAttributeValues: { ':p': offCurve },
      }),
    );
    const balance = await f.usdcBalance(seller.key);
    const res = await f.refund(seller.key, payment);
    expect(res).toMatchObject({ status: 400, body: { error: "the payment's payer is not a wallet a refund can be sent to" } });
    expect(await f.usdcBalance(seller.key)).toBe(balance);
    expect(await f.payment(seller.key, payment)).toMatchObject({ refunded: 0 });
  });
});
