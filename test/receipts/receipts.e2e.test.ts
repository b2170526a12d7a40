/**
 * Receipts over HTTP against the local stack (DESIGN §27, docs/receipts.md): either party of a
 * settled movement reads its receipt, stock jose verifies it with the keys the service publishes
 * (`createRemoteJWKSet` on /.well-known/jwks.json, and `createLocalJWKSet`), a changed byte fails,
 * and a movement that has not settled has none. Each kind of movement is driven as its users drive
 * it — a top-up paid at the PayPal imitation, an x402 payment made by the stock buyer on the local
 * chain and given back by its agent (DESIGN §28), a payout sent by the worker — and its receipt's
 * payload is checked field by field against what the service recorded.
 */
import { compactVerify, createLocalJWKSet, createRemoteJWKSet, type JSONWebKeySet } from 'jose';
import { getPayout } from '../../functions/store/payouts/payout.repository';
import { auditAfterAll } from '../support/audit';
import { eventually } from '../support/eventually';
import { useTestStack } from '../support/stack';
import { useRefundFixture } from '../support/x402-refunds';
import { getTopup, openTopup, type TopupBody } from '../topups/support';
import { startReceiver } from '../webhooks/receiver';

const t = useTestStack(
  { RECONCILE_PENDING_AFTER_SECONDS: '1', RECONCILE_PROCESSING_AFTER_SECONDS: '1' },
  { payouts: { visibilityTimeoutSeconds: 1, reconcileIntervalMs: 250 }, webhooks: { visibilityTimeoutSeconds: 2, pollIntervalMs: 50 } },
);
const f = useRefundFixture(t);
auditAfterAll();

let seq = 0;
const idem = () => `receipts-${process.pid}-${++seq}-${Date.now()}`;
type Answer = { id: string; receipt: string; error?: string };

const receipt = (id: string, headers: Record<string, string>) => t.call<Answer>('GET', `/api/v1/receipts/${id}`, { headers });

async function verified(jws: string) {
  const { payload, protectedHeader } = await compactVerify(jws, createRemoteJWKSet(new URL(`${t.stack.url}/.well-known/jwks.json`)), {
    algorithms: ['ES256'],
  });
  return { header: protectedHeader, payload: JSON.parse(Buffer.from(payload).toString('utf8')) as Record<string, unknown> };
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** What the payer does at the PayPal imitation: open the approval page and press Approve (a form POST). */
async function approveAtPaypal(topup: TopupBody): Promise<void> {
  const page = await fetch(topup.approveUrl ?? '');
  const action = /action="([^"]+\/approve)"/.exec(await page.text())?.[1];
  if (page.status !== 200 || !action) throw new Error(`approval page: ${page.status}`);
  const res = await fetch(new URL(topup.approveUrl ?? '').origin + action, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'funding=ok',
    redirect: 'manual',
  });
  if (res.status !== 200) throw new Error(`approve: ${res.status}`);
}

async function charge(agent: { key: string }, user: { key: string }, body: Record<string, unknown>) {
  const res = await t.call<{ id: string; status: string }>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': idem() },
    body: { currency: 'USD', description: 'receipts', ...body },
  });
  if (res.status !== 201) throw new Error(`charge: ${res.status} ${res.text}`);
  return res.body;
}

describe('GET /api/v1/receipts/{id}', () => {
  it('answers either party of a settled charge a receipt that stock jose verifies with the published keys', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 20 });
    const made = await charge(agent, user, { amount: 2.5 });
    const byAgent = await receipt(made.id, { 'x-agent-key': agent.key });
    expect(byAgent.status).toBe(200);
    expect(byAgent.body.id).toBe(made.id);
    const { header, payload } = await verified(byAgent.body.receipt);
    expect(header).toEqual({ alg: 'ES256', kid: expect.any(String), typ: 'receipt+jwt' });
    expect(payload).toEqual({
      v: 1,
      type: 'charge',
      id: made.id,
      amount: '2.5',
      currency: 'USD',
      payer: { kind: 'user', id: user.id },
      payee: { kind: 'agent', id: agent.id },
      status: 'SUCCESS',
      settledAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      iat: expect.any(Number),
    });
    const byPayer = await receipt(made.id, { 'x-user-key': user.key });
    expect(byPayer.status).toBe(200);
    expect((await verified(byPayer.body.receipt)).payload).toEqual({ ...payload, iat: expect.any(Number) });
  });

  it('publishes the keys publicly and cacheably; createLocalJWKSet on them verifies too, and a changed byte fails', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 5 });
    const made = await charge(agent, user, { amount: 1 });
    const jws = (await receipt(made.id, { 'x-user-key': user.key })).body.receipt;
    const jwks = await t.call<JSONWebKeySet>('GET', '/.well-known/jwks.json');
    expect(jwks.status).toBe(200);
    expect(jwks.headers.get('cache-control')).toBe('public, max-age=300');
    expect(jwks.body.keys).toEqual([
      expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig', kid: expect.any(String) }),
    ]);
    expect(jwks.body.keys[0]).not.toHaveProperty('d');
    const keys = createLocalJWKSet(jwks.body);
    await expect(compactVerify(jws, keys)).resolves.toBeDefined();
    const [h, p, s] = jws.split('.') as [string, string, string];
    const payload = Buffer.from(p, 'base64url');
    payload[payload.indexOf('1')] = '2'.charCodeAt(0);
    await expect(compactVerify(`${h}.${payload.toString('base64url')}.${s}`, keys)).rejects.toThrow();
  });

  it('has no receipt for a hold until it is captured, then one for the captured amount', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 20 });
    const hold = await charge(agent, user, { amount: 5, capture: false });
    expect(hold.status).toBe('PENDING');
    for (const headers of [{ 'x-agent-key': agent.key }, { 'x-user-key': user.key }] as Record<string, string>[]) {
      expect(await receipt(hold.id, headers)).toMatchObject({ status: 404, body: { error: 'receipt not found' } });
    }
    const captured = await t.call('POST', `/api/v1/agents/charge/${hold.id}/capture`, {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': idem() },
      body: { amount: 3 },
    });
    expect(captured.status).toBe(200);
    const { payload } = await verified((await receipt(hold.id, { 'x-agent-key': agent.key })).body.receipt);
    expect(payload).toMatchObject({ type: 'charge', amount: '3', status: 'SUCCESS' });
  });

  it('gives a charge’s refunds a receipt of their own, <chargeId>.refund, with the total refunded', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 20 });
    const made = await charge(agent, user, { amount: 4 });
    expect((await receipt(`${made.id}.refund`, { 'x-agent-key': agent.key })).status).toBe(404);
    for (const amount of [1, 0.5]) {
      const refunded = await t.call('POST', `/api/v1/agents/charge/${made.id}/refund`, {
        headers: { 'x-agent-key': agent.key, 'idempotency-key': idem() },
        body: { amount },
      });
      expect(refunded.status).toBe(200);
    }
    const answer = await receipt(`${made.id}.refund`, { 'x-user-key': user.key });
    expect(answer.body.id).toBe(`${made.id}.refund`);
    expect((await verified(answer.body.receipt)).payload).toMatchObject({
      type: 'refund',
      id: `${made.id}.refund`,
      amount: '1.5',
      payer: { kind: 'agent', id: agent.id },
      payee: { kind: 'user', id: user.id },
      status: 'COMPLETED',
    });
  });

  it('gives a completed payout a receipt for its agent, and none to anyone else', async () => {
    const agent = await t.earningAgent({ USD: '10' });
    const res = await t.call<{ payoutId: string }>('POST', '/api/v1/agents/withdraw', {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': idem() },
      body: { amount: 10, currency: 'USD', walletAddress: 'agent@example.com' },
    });
    expect(res.status).toBe(200);
    const answer = await eventually(`payout ${res.body.payoutId} to have a receipt`, async () => {
      const got = await receipt(res.body.payoutId, { 'x-agent-key': agent.key });
      if (got.status !== 200) throw new Error(`still ${got.status}`);
      return got.body;
    });
    // The payout as the agent reads it: when it completed and the PayPal payout's id.
    const paid = await t.call<{ processedAt: string; externalId: string }>('GET', `/api/v1/agents/withdraw?payoutId=${res.body.payoutId}`, {
      headers: { 'x-agent-key': agent.key },
    });
    expect(paid.body.processedAt).toMatch(ISO);
    expect((await verified(answer.receipt)).payload).toEqual({
      v: 1,
      type: 'payout',
      id: res.body.payoutId,
      // The gross: what left the agent's balance, fee included.
      amount: '10',
      currency: 'USD',
      payer: { kind: 'agent', id: agent.id },
      payee: { kind: 'paypal', id: 'agent@example.com' },
      status: 'COMPLETED',
      settledAt: paid.body.processedAt,
      transaction: paid.body.externalId,
      iat: expect.any(Number),
    });
    const other = await t.enabledAgent();
    expect((await receipt(res.body.payoutId, { 'x-agent-key': other.key })).status).toBe(404);
  });

  it('gives a top-up paid at PayPal a receipt for its payer once COMPLETED: the payer funded their own balance', async () => {
    const user = await t.fundedUser();
    const opened = await openTopup(t, user.key, '{"currency":"USD","amount":12.5}');
    expect(opened.status).toBe(201);
    const topupId = opened.body.id;
    expect(await receipt(topupId, { 'x-user-key': user.key })).toMatchObject({ status: 404, body: { error: 'receipt not found' } });
    await approveAtPaypal(opened.body);
    const done = (await getTopup(t, user.key, topupId)).body as TopupBody & { completedAt: string };
    expect(done).toMatchObject({
      status: 'COMPLETED',
      amount: 12.5,
      externalId: expect.any(String),
      completedAt: expect.stringMatching(ISO),
    });
    const answer = await receipt(topupId, { 'x-user-key': user.key });
    expect(answer.status).toBe(200);
    expect(answer.body.id).toBe(topupId);
    const { header, payload } = await verified(answer.body.receipt);
    expect(header).toEqual({ alg: 'ES256', kid: expect.any(String), typ: 'receipt+jwt' });
    expect(payload).toEqual({
      v: 1,
      type: 'topup',
      id: topupId,
      amount: '12.5',
      currency: 'USD',
      payer: { kind: 'user', id: user.id },
      payee: { kind: 'balance', id: user.id },
      status: 'COMPLETED',
      settledAt: done.completedAt,
      // The PayPal capture that paid it.
      transaction: done.externalId,
      iat: expect.any(Number),
    });
    // A top-up has one party with a key here: its payer.
    const agent = await t.enabledAgent();
    expect(await receipt(topupId, { 'x-agent-key': agent.key })).toMatchObject({ status: 404, body: { error: 'receipt not found' } });
  });

  it('gives an x402 payment credited to its agent a receipt (the buyer’s wallet paid the agent), and its refund one of its own, reversed, under the xr id', async () => {
    const rx = await startReceiver();
    try {
      const seller = await f.seller();
      const hook = await t.call('POST', '/api/v1/agents/webhooks', { headers: { 'x-agent-key': seller.key }, body: { url: rx.url } });
      expect(hook.status).toBe(201);
      const paymentId = await f.pay(seller);
      const payment = await f.payment(seller.key, paymentId);
      const credited = await receipt(paymentId, { 'x-agent-key': seller.key });
      expect(credited.status).toBe(200);
      expect(credited.body.id).toBe(paymentId);
      expect((await verified(credited.body.receipt)).payload).toEqual({
        v: 1,
        type: 'x402_payment',
        id: paymentId,
        amount: '0.01',
        currency: 'USDC',
        payer: { kind: 'solana', id: f.payer },
        payee: { kind: 'agent', id: seller.id },
        status: 'CREDITED',
        settledAt: payment.createdAt,
        transaction: payment.transaction,
        resource: payment.resource,
        iat: expect.any(Number),
      });
      expect(payment.resource).toBe(seller.url);

      const refund = await f.refund(seller.key, paymentId, { body: { amount: 0.004 } });
      expect(refund.status).toBe(202);
      const refundId = refund.body.id;
      const done = await f.untilFinal(seller.key, refundId);
      expect(done).toMatchObject({ status: 'COMPLETED', transaction: expect.any(String) });
      const stored = await getPayout(seller.id, refundId);
      expect(stored?.processedAt).toMatch(ISO);
      const answer = await receipt(refundId, { 'x-agent-key': seller.key });
      expect(answer.status).toBe(200);
      expect(answer.body.id).toBe(refundId);
      const expected = {
        v: 1,
        type: 'refund',
        id: refundId,
        amount: '0.004',
        currency: 'USDC',
        // The payment's parties the other way round: the agent gave the buyer's wallet its money back.
        payer: { kind: 'agent', id: seller.id },
        payee: { kind: 'solana', id: f.payer },
        status: 'COMPLETED',
        settledAt: stored?.processedAt,
        transaction: done.transaction,
        iat: expect.any(Number),
      };
      expect((await verified(answer.body.receipt)).payload).toEqual(expected);
      // The COMPLETED refund's read links that receipt, on the stage's address (DESIGN §27).
      expect((done as { receiptUrl?: string }).receiptUrl).toBe(`${t.stack.url}/api/v1/receipts/${refundId}`);

      // Its event carries the same receipt, as the refund's agent reads it.
      const event = JSON.parse(
        (
          await rx.waitFor((r) => {
            const e = JSON.parse(r.body) as { type: string; data: { id: string } };
            return e.type === 'x402.payment.refunded' && e.data.id === refundId;
          }, 15_000)
        ).body,
      ) as Record<string, unknown>;
      expect(Object.keys(event)).toEqual(['id', 'type', 'createdAt', 'data', 'receipt']);
      expect((await verified(String(event.receipt))).payload).toEqual(expected);
    } finally {
      await rx.stop();
    }
  });

  it('puts the receipt in the events of settled movements, verifiable as the one the route answers', async () => {
    const rx = await startReceiver();
    try {
      const agent = await t.enabledAgent();
      const user = await t.fundedUser({ USD: 10 });
      const hook = await t.call<{ id: string }>('POST', '/api/v1/agents/webhooks', {
        headers: { 'x-agent-key': agent.key },
        body: { url: rx.url },
      });
      expect(hook.status).toBe(201);
      const made = await charge(agent, user, { amount: 1.25 });
      await t.call('POST', `/api/v1/agents/charge/${made.id}/refund`, {
        headers: { 'x-agent-key': agent.key, 'idempotency-key': idem() },
        body: { amount: 0.25 },
      });
      const eventAbout = (type: string) => (r: { body: string }) => {
        const e = JSON.parse(r.body) as { type: string; data: { id: string } };
        return e.type === type && e.data.id === made.id;
      };
      const succeeded = JSON.parse((await rx.waitFor(eventAbout('charge.succeeded'), 15_000)).body) as Record<string, unknown>;
      expect(Object.keys(succeeded)).toEqual(['id', 'type', 'createdAt', 'data', 'receipt']);
      expect((await verified(String(succeeded.receipt))).payload).toMatchObject({ type: 'charge', id: made.id, amount: '1.25' });
      const refunded = JSON.parse((await rx.waitFor(eventAbout('charge.refunded'), 15_000)).body) as Record<string, unknown>;
      expect((await verified(String(refunded.receipt))).payload).toMatchObject({ type: 'refund', id: `${made.id}.refund`, amount: '0.25' });
    } finally {
      await rx.stop();
    }
  });

  it('asks for a key: none is 401 naming x-agent-key, an unknown one 401', async () => {
    expect(await t.call('GET', '/api/v1/receipts/anything')).toMatchObject({ status: 401, body: { error: 'missing x-agent-key header' } });
    expect((await receipt('anything', { 'x-user-key': `uk_live_${'x'.repeat(44)}` })).status).toBe(401);
  });
});
