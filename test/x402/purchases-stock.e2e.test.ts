/**
 * x402 purchases end to end (DESIGN §22, docs/x402.md "Buying from x402 sellers") with packages
 * no one here can tune: a stock `@x402/express` seller whose facilitator is the STOCK `@x402/svm`
 * facilitator (its own fee payer) on the local chain, paying a wallet outside the service; the
 * buyer is stock `@x402/fetch` with the README's scheme client, which asks the service for the
 * payment under a grant key. 200 from the seller, the seller's wallet +amount on chain, the payer
 * −amount once, the grant's `spent` +amount, the purchase SUCCESS; a payment never sent → EXPIRED
 * and the hold back; concurrent purchases never past the grant's `total`; a replayed key signs
 * nothing new. The ledger audit (the wallets' equation included) after every test.
 */

import { railFor } from '../../functions/rails';
import { createReconciler } from '../../functions/reconciler/reconciler';
import { purchaseChain } from '../../functions/x402/purchase-chain';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { usePurchaseFixture } from '../support/x402';
import { serviceBuyer } from './stock-seller';

const t = useTestStack();
// The hot wallet's USDC float: what purchases are paid from (the operator's funding, in the wallets' equation).
const x402 = usePurchaseFixture(t, { hotWalletUsdc: 100_000_000n });
afterEach(async () => {
  await expectLedgerBalanced();
});

type Purchase = {
  id: string;
  status: string;
  pendingReason: string | null;
  failureReason: string | null;
  amount: number;
  currency: string;
  payTo: string;
  network: string;
  resource: { url: string } | null;
  grantId: string | null;
  createdAt: string;
  expiresAt: string;
  paymentPayload: { x402Version: number; payload: { transaction: string } } | null;
  transaction: string | null;
  error?: string;
};
type Grant = { id: string; key: string; spent: number };

const reconcile = () => createReconciler({ railFor, purchaseChain })();
const userBalance = (userId: string) => x402.usdcBalance(userId);
const grantOf = async (userKey: string, grantId: string) =>
  (await t.call<Grant>('GET', `/api/v1/users/me/grants/${grantId}`, { headers: { 'x-user-key': userKey } })).body;

/** A new enabled agent, its payer holding `usdc` USDC, and the payer's USDC grant for it of `limits` (and `extra` terms). */
const payer = (usdc: number, limits: Record<string, unknown> = { total: 5 }, extra: Record<string, unknown> = {}) =>
  x402.buyer({ usdc, grant: { limits, ...extra } });

const purchase = (agentKey: string, userKey: string, body: unknown, key = `p-${Date.now()}-${Math.random()}`) =>
  t.call<Purchase>('POST', '/api/v1/agents/x402/purchases', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': key },
    body,
  });

describe('buying from a stock x402 seller', () => {
  it('the stock buyer with the README scheme client gets 200; the seller +0.01 on chain, the payer −0.01 once, the grant spent, SUCCESS', async () => {
    const { agent, user, grant } = await payer(1);
    const sellerBefore = t.stack.rails.solana.tokenBalance(x402.seller.wallet);
    const buyer = serviceBuyer(t.stack.url, agent.key, grant.key);
    t.stack.rails.solana.advanceBlocks(1);
    const res = await buyer.fetch(x402.resource);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ forecast: 'sunny' });
    expect(t.stack.rails.solana.tokenBalance(x402.seller.wallet) - sellerBefore).toBe(10_000n);
    expect(buyer.purchases).toHaveLength(1);
    const id = buyer.purchases[0]?.id as string;
    // The reconciler finds the transfer the service signed on chain and captures it, once.
    await reconcile();
    await reconcile();
    const read = await t.call<Purchase>('GET', `/api/v1/agents/x402/purchases/${id}`, { headers: { 'x-agent-key': agent.key } });
    expect(read.body).toMatchObject({
      id,
      status: 'SUCCESS',
      amount: 0.01,
      currency: 'USDC',
      payTo: x402.seller.wallet,
      grantId: grant.id,
    });
    expect(read.body.transaction).toBe(x402.seller.settled.at(-1)?.transaction);
    expect(await userBalance(user.id)).toBeCloseTo(0.99, 6);
    expect((await grantOf(user.key, grant.id)).spent).toBeCloseTo(0.01, 6);
    const history = await t.call<{ data: Record<string, unknown>[] }>('GET', '/api/v1/users/me/charges', {
      headers: { 'x-user-key': user.key },
    });
    expect(history.body.data[0]).toMatchObject({ id, type: 'x402_purchase', payTo: x402.seller.wallet, status: 'SUCCESS', amount: 0.01 });
    const list = await t.call<{ data: Purchase[] }>('GET', '/api/v1/agents/x402/purchases', { headers: { 'x-agent-key': agent.key } });
    expect(list.body.data.map((p) => p.id)).toEqual([id]);
  });
});

const read = (agentKey: string, id: string) =>
  t.call<Purchase>('GET', `/api/v1/agents/x402/purchases/${id}`, { headers: { 'x-agent-key': agentKey } });

const payWith = (requirements: Record<string, unknown>, paymentPayload: Purchase['paymentPayload']) =>
  x402.pay(paymentPayload, requirements);

describe('a purchase through the API', () => {
  it('201 with the payment; the receipt of the seller settling it is checked on chain and captures it at once', async () => {
    const { agent, user, grant } = await payer(1);
    const requirements = await x402.requirements();
    const made = await purchase(agent.key, grant.key, {
      x402Version: 2,
      paymentRequirements: requirements,
      resource: { url: x402.resource },
    });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      status: 'PENDING',
      pendingReason: null,
      amount: 0.01,
      currency: 'USDC',
      payTo: x402.seller.wallet,
      network: t.stack.rails.solana.network,
      resource: { url: x402.resource },
      grantId: grant.id,
    });
    expect(made.body.id).toMatch(/^xp01/);
    expect(made.body.paymentPayload?.x402Version).toBe(2);
    expect(await userBalance(user.id)).toBeCloseTo(0.99, 6);
    const paid = await payWith(requirements, made.body.paymentPayload);
    expect(paid.status).toBe(200);
    const transaction = x402.seller.settled.at(-1)?.transaction as string;
    // Another transaction is refused (it does not carry the hot wallet's signature of this payment).
    const other = await t.call<Purchase>('POST', `/api/v1/agents/x402/purchases/${made.body.id}/receipt`, {
      headers: { 'x-agent-key': agent.key },
      body: { transaction: t.stack.rails.solana.landed()[0]?.signature },
    });
    expect(other.status).toBe(409);
    const receipt = await t.call<Purchase>('POST', `/api/v1/agents/x402/purchases/${made.body.id}/receipt`, {
      headers: { 'x-agent-key': agent.key },
      body: { transaction },
    });
    expect(receipt.status).toBe(200);
    expect(receipt.body).toMatchObject({ status: 'SUCCESS', transaction });
    // Again, and the reconciler after it: captured once.
    expect(
      (
        await t.call<Purchase>('POST', `/api/v1/agents/x402/purchases/${made.body.id}/receipt`, {
          headers: { 'x-agent-key': agent.key },
          body: { transaction },
        })
      ).status,
    ).toBe(200);
    await reconcile();
    expect(await userBalance(user.id)).toBeCloseTo(0.99, 6);
    expect((await grantOf(user.key, grant.id)).spent).toBeCloseTo(0.01, 6);
  });

  it('a payment never sent to the seller: EXPIRED once its blockhash expired at finalized, the hold back to the payer and the grant', async () => {
    const { agent, user, grant } = await payer(1);
    const made = await purchase(agent.key, grant.key, {
      x402Version: 2,
      paymentRequirements: await x402.requirements(),
    });
    expect(made.status).toBe(201);
    expect(await userBalance(user.id)).toBeCloseTo(0.99, 6);
    // Still landable: nothing ends it.
    await reconcile();
    expect((await read(agent.key, made.body.id)).body.status).toBe('PENDING');
    t.stack.rails.solana.expireBlockhash();
    await reconcile();
    const after = (await read(agent.key, made.body.id)).body;
    expect(after).toMatchObject({ status: 'EXPIRED', failureReason: 'not settled by the seller', paymentPayload: null });
    expect(await userBalance(user.id)).toBeCloseTo(1, 6);
    expect((await grantOf(user.key, grant.id)).spent).toBe(0);
    // The payment can no longer land: the seller's facilitator refuses it.
    const late = await payWith(await x402.requirements(), made.body.paymentPayload);
    expect(late.status).not.toBe(200);
  });

  it("concurrent purchases under a grant's total never spend past it", async () => {
    const { agent, user, grant } = await payer(1, { total: 0.05 });
    const requirements = await x402.requirements();
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => purchase(agent.key, grant.key, { x402Version: 2, paymentRequirements: requirements })),
    );
    const made = answers.filter((a) => a.status === 201);
    expect(made).toHaveLength(5);
    for (const a of answers.filter((a) => a.status !== 201)) expect(a.body).toEqual({ error: 'spending limit exceeded' });
    expect(await userBalance(user.id)).toBeCloseTo(0.95, 6);
    expect((await grantOf(user.key, grant.id)).spent).toBeCloseTo(0.05, 6);
    // Every payment distinct (the stock client's nonce memo): each is its own transfer.
    expect(new Set(made.map((a) => a.body.paymentPayload?.payload.transaction)).size).toBe(5);
    t.stack.rails.solana.expireBlockhash();
    await reconcile();
    expect(await userBalance(user.id)).toBeCloseTo(1, 6);
  });

  it('a replayed Idempotency-Key answers the same purchase and payment: nothing held or signed again', async () => {
    const { agent, user, grant } = await payer(1);
    const body = { x402Version: 2, paymentRequirements: await x402.requirements() };
    const first = await purchase(agent.key, grant.key, body, 'replay-1');
    t.stack.rails.solana.advanceBlocks(1);
    const again = await purchase(agent.key, grant.key, body, 'replay-1');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.paymentPayload).toEqual(first.body.paymentPayload);
    expect(await userBalance(user.id)).toBeCloseTo(0.99, 6);
    const other = await purchase(agent.key, grant.key, { ...body, resource: { url: 'https://elsewhere.example/x' } }, 'replay-1');
    expect(other.status).toBe(422);
    t.stack.rails.solana.expireBlockhash();
    await reconcile();
  });

  it("above the grant's approvalAbove: 202 without a payment; the payer approves it by its id; GET then builds the payment", async () => {
    const { agent, user, grant } = await payer(1, { total: 5 }, { approvalAbove: 0.005 });
    const requirements = await x402.requirements();
    const made = await purchase(agent.key, grant.key, { x402Version: 2, paymentRequirements: requirements });
    expect(made.status).toBe(202);
    expect(made.body).toMatchObject({ status: 'PENDING', pendingReason: 'user_approval', paymentPayload: null });
    expect((await read(agent.key, made.body.id)).body.paymentPayload).toBeNull();
    const history = await t.call<{ data: Record<string, unknown>[] }>('GET', '/api/v1/users/me/charges', {
      headers: { 'x-user-key': user.key },
    });
    expect(history.body.data[0]).toMatchObject({ id: made.body.id, type: 'x402_purchase', pendingReason: 'user_approval' });
    const approved = await t.call('POST', `/api/v1/users/me/charges/${made.body.id}/approve`, { headers: { 'x-user-key': user.key } });
    expect(approved.status).toBe(200);
    // The answer names the purchase by its own id, never the hold's behind it.
    expect(approved.body).toMatchObject({ id: made.body.id, status: 'PENDING', pendingReason: 'capture' });
    const got = await read(agent.key, made.body.id);
    expect(got.body).toMatchObject({ status: 'PENDING', pendingReason: null });
    expect(got.body.paymentPayload?.x402Version).toBe(2);
    expect((await read(agent.key, made.body.id)).body.paymentPayload).toEqual(got.body.paymentPayload);
    expect((await payWith(requirements, got.body.paymentPayload)).status).toBe(200);
    await reconcile();
    expect((await read(agent.key, made.body.id)).body.status).toBe('SUCCESS');
    expect(await userBalance(user.id)).toBeCloseTo(0.99, 6);
  });

  it("the purchase's own id (xp…) in every answer about it: the payer's decline and release, the agent's charge list and read", async () => {
    const { agent, user, grant } = await payer(1, { total: 5 }, { approvalAbove: 0.005 });
    const requirements = await x402.requirements();
    const declined = await purchase(agent.key, grant.key, { x402Version: 2, paymentRequirements: requirements });
    const released = await purchase(agent.key, grant.key, { x402Version: 2, paymentRequirements: requirements });
    expect([declined.status, released.status]).toEqual([202, 202]);
    const listed = await t.call<{ data: { id: string; idempotencyKey: string }[] }>('GET', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': agent.key },
    });
    expect(listed.body.data.map((c) => c.id)).toEqual([released.body.id, declined.body.id]);
    const read = await t.call<{ id: string; status: string }>('GET', `/api/v1/agents/charge/${declined.body.id}`, {
      headers: { 'x-agent-key': agent.key },
    });
    expect([read.status, read.body.id]).toEqual([200, declined.body.id]);
    const decline = await t.call('POST', `/api/v1/users/me/charges/${declined.body.id}/decline`, { headers: { 'x-user-key': user.key } });
    expect([decline.status, decline.body]).toMatchObject([
      200,
      { id: declined.body.id, status: 'FAILED', failureReason: 'declined by user' },
    ]);
    const release = await t.call('POST', `/api/v1/users/me/charges/${released.body.id}/release`, { headers: { 'x-user-key': user.key } });
    expect([release.status, release.body]).toMatchObject([
      200,
      { id: released.body.id, status: 'FAILED', failureReason: 'released by user' },
    ]);
    expect(await userBalance(user.id)).toBe(1);
  });
});

describe('requirements the service does not pay', () => {
  const cases: [string, (r: Record<string, unknown>) => unknown, string][] = [
    [
      'another asset',
      (r) => ({ ...r, asset: 'So11111111111111111111111111111111111111112' }),
      'paymentRequirements.asset: unsupported asset',
    ],
    [
      'another network',
      (r) => ({ ...r, network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp' }),
      'paymentRequirements.network: unsupported network',
    ],
    ['another scheme', (r) => ({ ...r, scheme: 'upto' }), 'paymentRequirements.scheme: unsupported scheme'],
    ['an amount below the minimum', (r) => ({ ...r, amount: '1' }), 'paymentRequirements.amount: below the minimum amount'],
    ['a decimal amount', (r) => ({ ...r, amount: '0.01' }), 'paymentRequirements.amount: must be a positive integer of atomic units'],
    ['no fee payer', (r) => ({ ...r, extra: {} }), 'paymentRequirements.extra.feePayer: required'],
    ['an invalid payTo', (r) => ({ ...r, payTo: 'nope' }), 'paymentRequirements.payTo: invalid address'],
    ['an unknown field', (r) => ({ ...r, surprise: 1 }), 'paymentRequirements.surprise: unknown field'],
  ];
  it.each(cases)('%s → 400 naming it, nothing held', async (_name, change, error) => {
    const { agent, user, grant } = await payer(1);
    const res = await purchase(agent.key, grant.key, {
      x402Version: 2,
      paymentRequirements: change(await x402.requirements()),
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error });
    expect(await userBalance(user.id)).toBe(1);
  });

  it('payTo the treasury or the hot wallet → 400 pay agents of this service with a charge', async () => {
    const { agent, grant } = await payer(1);
    const requirements = await x402.requirements();
    const res = await purchase(agent.key, grant.key, {
      x402Version: 2,
      paymentRequirements: { ...requirements, payTo: t.stack.rails.solana.hotWallet.publicKey },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'pay agents of this service with a charge' });
  });

  it('more than the balance → 402 insufficient balance; a USD grant → 400', async () => {
    const { agent, grant } = await payer(0.005);
    const requirements = await x402.requirements();
    const res = await purchase(agent.key, grant.key, { x402Version: 2, paymentRequirements: requirements });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ error: 'insufficient balance' });
  });
});
