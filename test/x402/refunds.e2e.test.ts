/**
 * Refunds of x402 payments end to end (DESIGN §28, docs/x402.md "Refunds"): the stock buyer
 * (`@x402/fetch` + `@x402/svm`) pays a seller agent through the stock `@x402/express` middleware on
 * the local chain; the agent gives the payment back in two parts, each debited at once and sent by
 * the payout worker from the hot wallet to the buyer's token account, exactly the amount asked; a
 * third is refused. Concurrent refunds never pass the payment; a disabled agent may still refund; an
 * agent that withdrew the money cannot. The ledger audit (the wallets' transfers included) holds
 * after every test.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import { getPayout } from '../../functions/store/payouts/payout.repository';
import { keys } from '../../functions/store/table';
import { paymentsByPayout } from '../faults/payout-checks';
import { expectLedgerBalanced } from '../support/audit';
import { solanaWallet } from '../support/payouts';
import { useTestStack } from '../support/stack';
import { useRefundFixture } from '../support/x402-refunds';

const t = useTestStack(
  { RECONCILE_PENDING_AFTER_SECONDS: '1', RECONCILE_PROCESSING_AFTER_SECONDS: '1', AUTH_CACHE_TTL_MS: '0' },
  { payouts: { visibilityTimeoutSeconds: 2, reconcileIntervalMs: 200 } },
);
const f = useRefundFixture(t);

afterEach(async () => {
  await expectLedgerBalanced();
});

describe('x402 refunds with the stock buyer', () => {
  it('sends the buyer exactly a partial refund and then the rest, once each; a third refund is 400', async () => {
    const seller = await f.seller();
    const paymentId = await f.pay(seller);
    expect(await f.payment(seller.key, paymentId)).toMatchObject({ amount: 0.01, refunded: 0 });
    expect(await f.usdcBalance(seller.key)).toBe(0.01);

    const before = f.payerUsdc();
    const first = await f.refund(seller.key, paymentId, { body: { amount: 0.004 } });
    expect(first.status).toBe(202);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^xr01[0-9a-z]{24}$/),
      paymentId,
      amount: 0.004,
      currency: 'USDC',
      to: f.payer,
      status: 'PENDING',
    });
    // Debited at once, before anything is paid.
    expect(await f.usdcBalance(seller.key)).toBe(0.006);
    const done = await f.untilFinal(seller.key, first.body.id);
    expect(done).toMatchObject({ status: 'COMPLETED', amount: 0.004, to: f.payer, transaction: expect.any(String) });
    expect(f.payerUsdc() - before).toBe(4_000n);
    expect(await f.payment(seller.key, paymentId)).toMatchObject({ refunded: 0.004 });

    // The rest, without a body.
    const rest = await f.refund(seller.key, paymentId);
    expect(rest.status).toBe(202);
    expect(rest.body.amount).toBe(0.006);
    expect((await f.untilFinal(seller.key, rest.body.id)).status).toBe('COMPLETED');
    expect(f.payerUsdc() - before).toBe(10_000n);
    expect(await f.payment(seller.key, paymentId)).toMatchObject({ refunded: 0.01 });
    expect(await f.usdcBalance(seller.key)).toBe(0);
    // One transfer each, on chain.
    expect(paymentsByPayout(t).get(first.body.id)).toBe(1);
    expect(paymentsByPayout(t).get(rest.body.id)).toBe(1);

    const third = await f.refund(seller.key, paymentId, { body: { amount: 0.000001 } });
    expect(third).toMatchObject({ status: 400, body: { error: 'refund exceeds payment' } });
    // The refunds are not withdrawals: the withdrawal list never shows them.
    const withdrawals = await t.call<{ payouts: unknown[] }>('GET', '/api/v1/agents/withdraw', { headers: { 'x-agent-key': seller.key } });
    expect(withdrawals.body.payouts).toEqual([]);
  });

  it('answers the same refund to the same Idempotency-Key, and debits once', async () => {
    const seller = await f.seller();
    const paymentId = await f.pay(seller);
    const key = `refund-${Date.now()}`;
    const first = await f.refund(seller.key, paymentId, { body: { amount: 0.002 }, idempotencyKey: key });
    const again = await f.refund(seller.key, paymentId, { body: { amount: 0.002 }, idempotencyKey: key });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await f.usdcBalance(seller.key)).toBe(0.008);
    await f.untilFinal(seller.key, first.body.id);
  });

  it('never refunds more than the payment when refunds race', async () => {
    const seller = await f.seller({ earned: 1 });
    const paymentId = await f.pay(seller);
    const answers = await Promise.all(Array.from({ length: 6 }, () => f.refund(seller.key, paymentId, { body: { amount: 0.003 } })));
    const accepted = answers.filter((a) => a.status === 202);
    // 0.003 × 3 = 0.009 fits in 0.01; a fourth would not. The others: past the payment, or lost every round.
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(accepted.length).toBeLessThanOrEqual(3);
    for (const a of answers.filter((a) => a.status !== 202)) expect([400, 409]).toContain(a.status);
    const refunded = (await f.payment(seller.key, paymentId)).refunded as number;
    expect(refunded).toBeCloseTo(0.003 * accepted.length, 6);
    expect(refunded).toBeLessThanOrEqual(0.01);
    for (const a of accepted) expect((await f.untilFinal(seller.key, a.body.id)).status).toBe('COMPLETED');
    // The agent's other earnings were never touched beyond the refunds.
    expect(await f.usdcBalance(seller.key)).toBeCloseTo(1.01 - refunded, 6);
  });

  it('lets a disabled agent refund, and pays it', async () => {
    const seller = await f.seller();
    const paymentId = await f.pay(seller);
    const off = await t.call('PATCH', `/api/v1/admin/agents/${seller.id}`, { headers: t.admin, body: { enabled: false } });
    expect(off.status).toBe(200);
    const before = f.payerUsdc();
    const res = await f.refund(seller.key, paymentId);
    expect(res.status).toBe(202);
    expect((await f.untilFinal(seller.key, res.body.id)).status).toBe('COMPLETED');
    expect(f.payerUsdc() - before).toBe(10_000n);
    // Never held by the kill switch on its way.
    expect((await getPayout(seller.id, res.body.id))?.heldAt).toBeUndefined();
  });

  it('refuses with 402 when the agent withdrew the money', async () => {
    const seller = await f.seller({ earned: 1 });
    const paymentId = await f.pay(seller);
    const wallet = solanaWallet();
    t.stack.rails.solana.createTokenAccount(wallet);
    const out = await t.call('POST', '/api/v1/agents/withdraw', {
      headers: { 'x-agent-key': seller.key, 'idempotency-key': `wd-${Date.now()}` },
      body: { amount: 1.005, currency: 'USDC', walletAddress: wallet },
    });
    expect(out.status).toBe(200);
    const res = await f.refund(seller.key, paymentId, { body: { amount: 0.006 } });
    expect(res).toMatchObject({ status: 402, body: { error: 'insufficient balance' } });
    expect(await f.payment(seller.key, paymentId)).toMatchObject({ refunded: 0 });
    // What is left still refunds.
    const part = await f.refund(seller.key, paymentId, { body: { amount: 0.005 } });
    expect(part.status).toBe(202);
    expect((await f.untilFinal(seller.key, part.body.id)).status).toBe('COMPLETED');
    // The withdrawal is paid on its own meanwhile; in flight or done, the audit after the test counts it.
  });

  it("creates the payer's token account on a payment's first refund only; a later one to a missing account fails and gives the money back", async () => {
    const seller = await f.seller();
    const paymentId = await f.pay(seller);
    // A payer whose wallet holds no USDC token account (its wallet app closed it, say): as if the
    // payment had come from it.
    const payer = solanaWallet();
    await db().send(
      new UpdateCommand({
        TableName: config().TABLE_NAME,
        Key: keys.x402Payment(seller.id, paymentId),
        UpdateExpression: 'SET payer = :p',
        ExpressionAttributeValues: { ':p': payer },
      }),
    );
    const hotWalletSol = t.stack.rails.solana.lamports(t.stack.rails.solana.hotWallet.publicKey);
    const first = await f.refund(seller.key, paymentId, { body: { amount: 0.003 } });
    expect(first.body.to).toBe(payer);
    expect((await f.untilFinal(seller.key, first.body.id)).status).toBe('COMPLETED');
    // Created by the refund, at the service's cost (the rent left the hot wallet).
    expect(t.stack.rails.solana.tokenBalance(payer)).toBe(3_000n);
    expect(t.stack.rails.solana.lamports(t.stack.rails.solana.hotWallet.publicKey)).toBeLessThan(hotWalletSol - 2_000_000n);

    // The payer closes the account again; the next refund does not create it: FAILED, the money back.
    const other = solanaWallet();
    await db().send(
      new UpdateCommand({
        TableName: config().TABLE_NAME,
        Key: keys.x402Payment(seller.id, paymentId),
        UpdateExpression: 'SET payer = :p',
        ExpressionAttributeValues: { ':p': other },
      }),
    );
    const second = await f.refund(seller.key, paymentId, { body: { amount: 0.002 } });
    expect(second.status).toBe(202);
    expect(await f.usdcBalance(seller.key)).toBe(0.005);
    expect((await f.untilFinal(seller.key, second.body.id)).status).toBe('FAILED');
    expect(await f.usdcBalance(seller.key)).toBe(0.007);
    expect(await f.payment(seller.key, paymentId)).toMatchObject({ refunded: 0.003 });
    expect(paymentsByPayout(t).get(second.body.id)).toBeUndefined();
    expect(t.stack.rails.solana.tokenBalance(other)).toBe(0n);
  });
});
