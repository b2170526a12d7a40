/**
 * The receipt links answers hand out (DESIGN §27, docs/receipts.md "In answers and events"), over
 * HTTP against the local stack: a settled charge, purchase and payout carry `receiptUrl`, a
 * refunded charge `refundReceiptUrl` too, absolute on the stage's public address and absent until
 * the movement settles. Every link an answer gives is followed as it is, with the party's own key,
 * and the receipt behind it verified with stock jose (`createLocalJWKSet` on the published keys +
 * `compactVerify`). A stored answer (create, capture, refund under their Idempotency-Key) replays
 * the very bytes the first one sent, links included.
 */
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { auditAfterAll } from '../support/audit';
import { eventually } from '../support/eventually';
import { useTestStack } from '../support/stack';
import { usePurchaseFixture } from '../support/x402';

const t = useTestStack(
  { RECONCILE_PENDING_AFTER_SECONDS: '1', RECONCILE_PROCESSING_AFTER_SECONDS: '1' },
  { payouts: { visibilityTimeoutSeconds: 1, reconcileIntervalMs: 250 } },
);
const x402 = usePurchaseFixture(t);
auditAfterAll();

let seq = 0;
const idem = () => `receipt-links-${process.pid}-${++seq}-${Date.now()}`;

type Links = { receiptUrl?: string; refundReceiptUrl?: string };
type ChargeBody = Links & { id: string; status: string; refundedAmount: number };

/**
 * Follows `url` exactly as given (a plain fetch: no client base, no rewriting) with `headers`,
 * and verifies the receipt it answers with the keys of /.well-known/jwks.json: its payload.
 */
async function follow(url: string | undefined, headers: Record<string, string>): Promise<Record<string, unknown>> {
  expect(url).toMatch(new RegExp(`^${t.stack.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/api/v1/receipts/[^/]+$`));
  const res = await fetch(url as string, { headers });
  const body = (await res.json()) as { id: string; receipt: string };
  expect([url, res.status]).toEqual([url, 200]);
  const keys = createLocalJWKSet((await (await fetch(`${t.stack.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet);
  const { payload, protectedHeader } = await compactVerify(body.receipt, keys, { algorithms: ['ES256'] });
  expect(protectedHeader.typ).toBe('receipt+jwt');
  const facts = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
  expect(facts.id).toBe(body.id);
  return facts;
}

const agentPost = (agentKey: string, path: string, body: unknown, key = idem()) =>
  t.call<ChargeBody>('POST', path, { headers: { 'x-agent-key': agentKey, 'idempotency-key': key }, body });

describe('receipt links in answers', () => {
  it('a charge: receiptUrl once SUCCESS on every route that shows it, refundReceiptUrl once refunded; each resolves for both parties', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 20 });
    const asAgent = { 'x-agent-key': agent.key };
    const asPayer = { 'x-user-key': user.key };
    const createKey = idem();
    const create = () =>
      t.call<ChargeBody>('POST', '/api/v1/agents/charges', {
        headers: { ...asAgent, 'x-user-key': user.key, 'idempotency-key': createKey },
        body: { amount: 4, currency: 'USD', description: 'links' },
      });
    const made = await create();
    expect(made.status).toBe(201);
    const { id } = made.body;
    expect(made.body.receiptUrl).toBe(`${t.stack.url}/api/v1/receipts/${id}`);
    expect(made.body).not.toHaveProperty('refundReceiptUrl');
    for (const headers of [asAgent, asPayer]) {
      expect(await follow(made.body.receiptUrl, headers)).toMatchObject({ type: 'charge', id, amount: '4', status: 'SUCCESS' });
    }
    // The stored answer replays byte for byte, its link with it.
    const replayed = await create();
    expect([replayed.headers.get('idempotent-replayed'), replayed.text]).toEqual(['true', made.text]);

    // The same link on every route that shows the charge: the agent's read and list, the payer's history, the operator's read.
    const read = await t.call<ChargeBody>('GET', `/api/v1/agents/charge/${id}`, { headers: asAgent });
    const list = await t.call<{ data: ChargeBody[] }>('GET', '/api/v1/agents/charges', { headers: asAgent });
    const history = await t.call<{ data: ChargeBody[] }>('GET', '/api/v1/users/me/charges', { headers: asPayer });
    const operator = await t.call<ChargeBody>('GET', `/api/v1/admin/charges/${id}`, { headers: t.admin });
    expect([read.body, list.body.data[0], history.body.data[0], operator.body].map((c) => c?.receiptUrl)).toEqual(
      Array(4).fill(made.body.receiptUrl),
    );

    // Refunds: the charge (still SUCCESS, its own receiptUrl) and the receipt of its refunds; each refund's answer replays as sent.
    const refundKey = idem();
    const refunded = await agentPost(agent.key, `/api/v1/agents/charge/${id}/refund`, { amount: 1 }, refundKey);
    expect(refunded.status).toBe(200);
    expect(refunded.body).toMatchObject({
      status: 'SUCCESS',
      refundedAmount: 1,
      receiptUrl: made.body.receiptUrl,
      refundReceiptUrl: `${t.stack.url}/api/v1/receipts/${id}.refund`,
    });
    for (const headers of [asAgent, asPayer]) {
      expect(await follow(refunded.body.refundReceiptUrl, headers)).toMatchObject({
        type: 'refund',
        id: `${id}.refund`,
        amount: '1',
        payer: { kind: 'agent', id: agent.id },
        payee: { kind: 'user', id: user.id },
      });
    }
    const again = await agentPost(agent.key, `/api/v1/agents/charge/${id}/refund`, { amount: 1 }, refundKey);
    expect([again.headers.get('idempotent-replayed'), again.text]).toEqual(['true', refunded.text]);
    // The operator's refund answers the same way; the refunds' receipt states the new total.
    const byOperator = await t.call<ChargeBody>('POST', `/api/v1/admin/agents/${agent.id}/charges/${id}/refund`, {
      headers: { ...t.admin, 'idempotency-key': idem() },
      body: { amount: 0.5 },
    });
    expect(byOperator.body).toMatchObject({ refundedAmount: 1.5, refundReceiptUrl: refunded.body.refundReceiptUrl });
    expect(await follow(byOperator.body.refundReceiptUrl, asPayer)).toMatchObject({ type: 'refund', amount: '1.5' });
    const reread = await t.call<ChargeBody>('GET', `/api/v1/agents/charge/${id}`, { headers: asAgent });
    expect(reread.body).toMatchObject({ receiptUrl: made.body.receiptUrl, refundReceiptUrl: refunded.body.refundReceiptUrl });
  });

  it('a hold: no link while PENDING or once released; its capture links the receipt, and the capture replays with it', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 20 });
    const hold = async () => {
      const res = await t.call<ChargeBody>('POST', '/api/v1/agents/charges', {
        headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': idem() },
        body: { amount: 5, currency: 'USD', capture: false },
      });
      expect([res.status, res.body.status]).toEqual([201, 'PENDING']);
      expect(res.body).not.toHaveProperty('receiptUrl');
      return res.body.id;
    };
    const held = await hold();
    const captureKey = idem();
    const captured = await agentPost(agent.key, `/api/v1/agents/charge/${held}/capture`, { amount: 3 }, captureKey);
    expect(captured.body).toMatchObject({ status: 'SUCCESS', amount: 3, receiptUrl: `${t.stack.url}/api/v1/receipts/${held}` });
    expect(captured.body).not.toHaveProperty('refundReceiptUrl');
    expect(await follow(captured.body.receiptUrl, { 'x-user-key': user.key })).toMatchObject({ type: 'charge', amount: '3' });
    const replay = await agentPost(agent.key, `/api/v1/agents/charge/${held}/capture`, { amount: 3 }, captureKey);
    expect([replay.headers.get('idempotent-replayed'), replay.text]).toEqual(['true', captured.text]);

    const released = await agentPost(agent.key, `/api/v1/agents/charge/${await hold()}/release`, {});
    expect(released.body.status).toBe('FAILED');
    expect(released.body).not.toHaveProperty('receiptUrl');
  });

  it('a charge the payer approves: PENDING without a link, the approval answers it SUCCESS with its receipt link', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 50 });
    const policy = await t.call('PUT', '/api/v1/users/me/policy', {
      headers: { 'x-user-key': user.key },
      body: { approvalAbove: { USD: 10 } },
    });
    expect(policy.status).toBe(200);
    const pending = await t.call<ChargeBody>('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': idem() },
      body: { amount: 15, currency: 'USD' },
    });
    expect([pending.status, 'receiptUrl' in pending.body]).toEqual([202, false]);
    const approved = await t.call<ChargeBody>('POST', `/api/v1/users/me/charges/${pending.body.id}/approve`, {
      headers: { 'x-user-key': user.key },
    });
    expect(approved.body).toMatchObject({ status: 'SUCCESS', receiptUrl: `${t.stack.url}/api/v1/receipts/${pending.body.id}` });
    expect(await follow(approved.body.receiptUrl, { 'x-agent-key': agent.key })).toMatchObject({ type: 'charge', amount: '15' });
  });

  it('a payout: receiptUrl once COMPLETED (the agent’s read and list), and never before', async () => {
    const agent = await t.earningAgent({ USD: '10' });
    const res = await t.call<{ payoutId: string }>('POST', '/api/v1/agents/withdraw', {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': idem() },
      body: { amount: 10, currency: 'USD', walletAddress: 'agent@example.com' },
    });
    expect(res.status).toBe(200);
    const { payoutId } = res.body;
    type PayoutBody = Links & { id: string; status: string };
    const done = await eventually(`payout ${payoutId} to complete`, async () => {
      const got = await t.call<PayoutBody>('GET', `/api/v1/agents/withdraw?payoutId=${payoutId}`, {
        headers: { 'x-agent-key': agent.key },
      });
      // Whatever its state when read, the link is there exactly when it is COMPLETED.
      expect([got.body.status, 'receiptUrl' in got.body]).toEqual([got.body.status, got.body.status === 'COMPLETED']);
      if (got.body.status !== 'COMPLETED') throw new Error(`still ${got.body.status}`);
      return got.body;
    });
    expect(done.receiptUrl).toBe(`${t.stack.url}/api/v1/receipts/${payoutId}`);
    expect(await follow(done.receiptUrl, { 'x-agent-key': agent.key })).toMatchObject({ type: 'payout', id: payoutId, amount: '10' });
    const list = await t.call<{ payouts: PayoutBody[] }>('GET', '/api/v1/agents/withdraw', { headers: { 'x-agent-key': agent.key } });
    expect(list.body.payouts.find((p) => p.id === payoutId)?.receiptUrl).toBe(done.receiptUrl);
  });

  it('an x402 purchase: no link while its payment is in flight; once captured, its receipt (type x402_purchase) on each route', async () => {
    const { agent, user, grant } = await x402.buyer();
    const requirements = await x402.requirements();
    type PurchaseBody = Links & { id: string; status: string; paymentPayload: unknown };
    const made = await x402.buy<PurchaseBody>({ agent, grant }, requirements, { body: { resource: { url: x402.resource } } });
    expect([made.status, made.body.status, 'receiptUrl' in made.body]).toEqual([201, 'PENDING', false]);
    expect((await x402.pay(made.body.paymentPayload, requirements)).status).toBe(200);
    const transaction = x402.seller.settled.at(-1)?.transaction as string;
    const captured = await t.call<PurchaseBody>('POST', `/api/v1/agents/x402/purchases/${made.body.id}/receipt`, {
      headers: { 'x-agent-key': agent.key },
      body: { transaction },
    });
    const url = `${t.stack.url}/api/v1/receipts/${made.body.id}`;
    expect(captured.body).toMatchObject({ status: 'SUCCESS', receiptUrl: url });
    for (const headers of [{ 'x-agent-key': agent.key }, { 'x-user-key': user.key }] as Record<string, string>[]) {
      expect(await follow(captured.body.receiptUrl, headers)).toMatchObject({ type: 'x402_purchase', id: made.body.id, amount: '0.01' });
    }
    const read = await x402.read<PurchaseBody>(agent.key, made.body.id);
    const list = await t.call<{ data: PurchaseBody[] }>('GET', '/api/v1/agents/x402/purchases', { headers: { 'x-agent-key': agent.key } });
    const history = await t.call<{ data: ChargeBody[] }>('GET', '/api/v1/users/me/charges', { headers: { 'x-user-key': user.key } });
    expect([read.body.receiptUrl, list.body.data[0]?.receiptUrl, history.body.data[0]?.receiptUrl]).toEqual([url, url, url]);
    // A purchase paid a seller: no refund of it is the agent's, so never a refundReceiptUrl.
    expect(history.body.data[0]).not.toHaveProperty('refundReceiptUrl');
  });

  it('MCP tools answer the same links as the routes (the same operations)', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 5 });
    const accept = { accept: 'application/json, text/event-stream', 'x-agent-key': agent.key };
    const tool = async (name: string, args: Record<string, unknown>) => {
      const res = await t.call<{ result: { structuredContent: ChargeBody } }>('POST', '/mcp', {
        headers: accept,
        body: { jsonrpc: '2.0', id: ++seq, method: 'tools/call', params: { name, arguments: args } },
      });
      expect(res.status).toBe(200);
      return res.body.result.structuredContent;
    };
    const made = await tool('create_charge', { amount: 2, currency: 'USD', user_key: user.key, idempotency_key: idem() });
    expect(made.receiptUrl).toBe(`${t.stack.url}/api/v1/receipts/${made.id}`);
    const refunded = await tool('refund_charge', { charge_id: made.id, amount: 0.5, idempotency_key: idem() });
    expect(refunded).toMatchObject({ receiptUrl: made.receiptUrl, refundReceiptUrl: `${made.receiptUrl}.refund` });
    expect(await follow(refunded.refundReceiptUrl, { 'x-agent-key': agent.key })).toMatchObject({ type: 'refund', amount: '0.5' });
    expect((await tool('get_charge', { charge_id: made.id })).refundReceiptUrl).toBe(refunded.refundReceiptUrl);
  });
});
