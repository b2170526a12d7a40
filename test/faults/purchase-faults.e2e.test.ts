/**
 * x402 purchases under crashes (DESIGN §22): the process dies between the seller's transfer landing
 * and the capture (the receipt's capture transaction never commits), and the reconciler captures it,
 * once; the capture commits but its answer is lost, and the retried receipt answers SUCCESS with
 * nothing moved again; the process dies between the hold and the payment's record, and the replay
 * of the same Idempotency-Key answers the same purchase with a payment (the one signed before never
 * left the process). The ledger audit, the wallets' equation included, after every test.
 */
import { randomUUID } from 'node:crypto';
import { railFor } from '../../functions/rails';
import { createReconciler } from '../../functions/reconciler/reconciler';
import { purchaseChain } from '../../functions/x402/purchase-chain';
import { expectLedgerBalanced } from '../support/audit';
import { startTestStack, type TestStack } from '../support/stack';
import { createTestTable } from '../support/table';
import { type StockSeller, startStockSeller } from '../x402/stock-seller';
import { crash, inject } from './inject';

let t: TestStack;
let seller: StockSeller;
beforeAll(async () => {
  await createTestTable();
  t = await startTestStack();
  t.stack.rails.solana.mintTo(t.stack.rails.solana.hotWallet.publicKey, 10_000_000n);
  seller = await startStockSeller(t.stack.rails.solana, '$0.01');
});
afterAll(async () => {
  await seller?.close();
  await t?.stack.stop();
});
afterEach(async () => {
  await expectLedgerBalanced();
});

type Purchase = { id: string; status: string; transaction: string | null; paymentPayload: unknown };
type Items = { Update?: { UpdateExpression?: string; Key?: { PK?: unknown } }; Put?: unknown }[];
const updates = (input: Record<string, unknown>) =>
  ((input.TransactItems as Items | undefined) ?? []).map((i) => i.Update?.UpdateExpression ?? '');
/** A purchase's capture: its charge set SUCCESS with the transaction it landed under. */
const isPurchaseCapture = (input: Record<string, unknown>) => updates(input).some((u) => u.includes('#xp.#tx = :tx'));
/** A purchase's payment recorded. */
const isPaymentRecord = (input: Record<string, unknown>) => updates(input).some((u) => u.includes('#xp.signed = :signed'));

const reconcile = () => createReconciler({ railFor, purchaseChain })();
const balance = async (userId: string) =>
  (await t.call<{ balances: { USDC: number } }>('GET', `/api/v1/admin/users/${userId}`, { headers: t.admin })).body.balances.USDC;

async function buyer() {
  const agent = await t.enabledAgent();
  const user = await t.fundedUser({ USDC: 1 });
  const grant = await t.call<{ key: string }>('POST', '/api/v1/users/me/grants', {
    headers: { 'x-user-key': user.key },
    body: { agentId: agent.id, currency: 'USDC', limits: { total: 1 } },
  });
  return { agent, user, grantKey: grant.body.key };
}

async function requirements(): Promise<Record<string, unknown>> {
  t.stack.rails.solana.advanceBlocks(1);
  const res = await fetch(`${seller.url}/weather`);
  return JSON.parse(Buffer.from(res.headers.get('payment-required') ?? '', 'base64').toString('utf8')).accepts[0];
}

/** Plain fetch: a crashed request's 500 is the injected fault, not an answer of the contract. */
const post = (path: string, headers: Record<string, string>, body: unknown) =>
  fetch(`${t.stack.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

async function paidPurchase(b: Awaited<ReturnType<typeof buyer>>) {
  const accepted = await requirements();
  const res = await post(
    '/api/v1/agents/x402/purchases',
    { 'x-agent-key': b.agent.key, 'x-user-key': b.grantKey, 'idempotency-key': randomUUID() },
    { x402Version: 2, paymentRequirements: accepted },
  );
  expect(res.status).toBe(201);
  const made = (await res.json()) as Purchase;
  const header = Buffer.from(
    JSON.stringify({ ...(made.paymentPayload as object), resource: { url: `${seller.url}/weather` }, accepted }),
  ).toString('base64');
  expect((await fetch(`${seller.url}/weather`, { headers: { 'payment-signature': header } })).status).toBe(200);
  return { made, transaction: seller.settled.at(-1)?.transaction as string };
}

const status = async (agentKey: string, id: string) =>
  (await t.call<Purchase>('GET', `/api/v1/agents/x402/purchases/${id}`, { headers: { 'x-agent-key': agentKey } })).body;

describe('a purchase when the process dies', () => {
  it('between the transfer landing and the capture: the reconciler captures it, once', async () => {
    const b = await buyer();
    const { made, transaction } = await paidPurchase(b);
    const fault = inject({ command: 'TransactWriteItemsCommand', match: isPurchaseCapture, times: 1, error: crash });
    try {
      const res = await post(`/api/v1/agents/x402/purchases/${made.id}/receipt`, { 'x-agent-key': b.agent.key }, { transaction });
      expect(res.status).toBe(500);
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBe(1);
    expect((await status(b.agent.key, made.id)).status).toBe('PENDING');
    expect(await balance(b.user.id)).toBeCloseTo(0.99, 6);
    await reconcile();
    await reconcile();
    expect(await status(b.agent.key, made.id)).toMatchObject({ status: 'SUCCESS', transaction });
    expect(await balance(b.user.id)).toBeCloseTo(0.99, 6);
  });

  it('after the capture committed, its answer lost: the retried receipt answers SUCCESS, nothing moves again', async () => {
    const b = await buyer();
    const { made, transaction } = await paidPurchase(b);
    const fault = inject({
      command: 'TransactWriteItemsCommand',
      match: isPurchaseCapture,
      times: 1,
      error: crash,
      where: 'after-response',
    });
    try {
      const res = await post(`/api/v1/agents/x402/purchases/${made.id}/receipt`, { 'x-agent-key': b.agent.key }, { transaction });
      expect(res.status).toBe(500);
    } finally {
      fault.remove();
    }
    const again = await t.call<Purchase>('POST', `/api/v1/agents/x402/purchases/${made.id}/receipt`, {
      headers: { 'x-agent-key': b.agent.key },
      body: { transaction },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'SUCCESS', transaction });
    await reconcile();
    expect(await balance(b.user.id)).toBeCloseTo(0.99, 6);
  });

  it("between the hold and the payment's record: the replay of the key answers the same purchase with its payment", async () => {
    const b = await buyer();
    const body = { x402Version: 2, paymentRequirements: await requirements() };
    const headers = { 'x-agent-key': b.agent.key, 'x-user-key': b.grantKey, 'idempotency-key': 'crash-before-record' };
    const fault = inject({ command: 'TransactWriteItemsCommand', match: isPaymentRecord, times: 1, error: crash });
    try {
      expect((await post('/api/v1/agents/x402/purchases', headers, body)).status).toBe(500);
    } finally {
      fault.remove();
    }
    expect(await balance(b.user.id)).toBeCloseTo(0.99, 6);
    const replay = await t.call<Purchase>('POST', '/api/v1/agents/x402/purchases', { headers, body });
    expect(replay.status).toBe(201);
    expect(replay.body.paymentPayload).not.toBeNull();
    const again = await t.call<Purchase>('POST', '/api/v1/agents/x402/purchases', { headers, body });
    expect(again.body).toEqual(replay.body);
    expect(await balance(b.user.id)).toBeCloseTo(0.99, 6);
    t.stack.rails.solana.expireBlockhash();
    await reconcile();
    expect((await status(b.agent.key, replay.body.id)).status).toBe('EXPIRED');
    expect(await balance(b.user.id)).toBe(1);
  });
});
