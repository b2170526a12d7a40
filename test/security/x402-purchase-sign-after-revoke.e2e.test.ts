/**
 * Attacker: an agent whose payer approved one of its x402 purchases (DESIGN §22, 202 above the
 * grant's approvalAbove), and then changed their mind the way DESIGN §16 lets a payer stop an
 * agent: revoked the grant, or blocked the agent in the policy. The payment is built only when the
 * agent first GETs the purchase after the approval; the agent GETs it anyway. Before, the service
 * signed the transfer then (nothing in the payment's record looked at the grant or the policy):
 * the hot wallet's USDC went to the seller under a grant the payer had revoked, while an ordinary
 * approved hold is refused at capture (403 `grant revoked`, `agent blocked by user`).
 *
 * Property: nothing is signed for a purchase whose grant was revoked or whose agent the payer
 * blocked after the approval: the GET is refused as a capture would be (403), no payment is ever
 * answered, and the payer can still release the hold and has the USDC back.
 */
import { randomUUID } from 'node:crypto';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { type StockSeller, startStockSeller } from '../x402/stock-seller';

const t = useTestStack();
let seller: StockSeller;
beforeAll(async () => {
  t.stack.rails.solana.mintTo(t.stack.rails.solana.hotWallet.publicKey, 10_000_000n);
  seller = await startStockSeller(t.stack.rails.solana, '$0.01');
});
afterAll(async () => seller?.close());
auditAfterAll();

type Purchase = { id: string; status: string; pendingReason: string | null; paymentPayload: unknown; error?: string };

async function approvedPurchase() {
  const agent = await t.enabledAgent();
  const user = await t.fundedUser({ USDC: 1 });
  const grant = await t.call<{ id: string; key: string }>('POST', '/api/v1/users/me/grants', {
    headers: { 'x-user-key': user.key },
    body: { agentId: agent.id, currency: 'USDC', limits: { total: 5 }, approvalAbove: 0.005 },
  });
  expect(grant.status).toBe(201);
  t.stack.rails.solana.advanceBlocks(1);
  const res = await fetch(`${seller.url}/weather`);
  const requirements = JSON.parse(Buffer.from(res.headers.get('payment-required') ?? '', 'base64').toString('utf8')).accepts[0];
  const made = await t.call<Purchase>('POST', '/api/v1/agents/x402/purchases', {
    headers: { 'x-agent-key': agent.key, 'x-user-key': grant.body.key, 'idempotency-key': randomUUID() },
    body: { x402Version: 2, paymentRequirements: requirements },
  });
  expect([made.status, made.body.paymentPayload]).toEqual([202, null]);
  const approved = await t.call('POST', `/api/v1/users/me/charges/${made.body.id}/approve`, { headers: { 'x-user-key': user.key } });
  expect(approved.status).toBe(200);
  return { agent, user, grant: grant.body, id: made.body.id };
}

const read = (agentKey: string, id: string) =>
  t.call<Purchase>('GET', `/api/v1/agents/x402/purchases/${id}`, { headers: { 'x-agent-key': agentKey } });
const balance = async (userId: string) =>
  (await t.call<{ balances: { USDC: number } }>('GET', `/api/v1/admin/users/${userId}`, { headers: t.admin })).body.balances.USDC;

describe('a purchase approved, then its grant revoked or its agent blocked: the service signs nothing', () => {
  it('grant revoked after the approval: the GET is 403 grant revoked, no payment, the payer releases it', async () => {
    const p = await approvedPurchase();
    const revoked = await t.call('DELETE', `/api/v1/users/me/grants/${p.grant.id}`, { headers: { 'x-user-key': p.user.key } });
    expect(revoked.status).toBe(200);
    const got = await read(p.agent.key, p.id);
    expect([got.status, got.body.error]).toEqual([403, 'grant revoked']);
    expect(got.body.paymentPayload).toBeUndefined();
    // Nothing was recorded behind the refusal either: the purchase still has no payment.
    const list = await t.call<{ data: Purchase[] }>('GET', '/api/v1/agents/x402/purchases', { headers: { 'x-agent-key': p.agent.key } });
    expect(list.body.data.find((x) => x.id === p.id)?.paymentPayload).toBeNull();
    const release = await t.call('POST', `/api/v1/users/me/charges/${p.id}/release`, { headers: { 'x-user-key': p.user.key } });
    expect(release.status).toBe(200);
    expect(await balance(p.user.id)).toBe(1);
  });

  it('agent blocked by the payer after the approval: the GET is 403 agent blocked by user, no payment', async () => {
    const p = await approvedPurchase();
    const blocked = await t.call('PUT', '/api/v1/users/me/policy', {
      headers: { 'x-user-key': p.user.key },
      body: { agents: { [p.agent.id]: { blocked: true } } },
    });
    expect(blocked.status).toBe(200);
    const got = await read(p.agent.key, p.id);
    expect(got.status).toBe(403);
    expect(got.body.paymentPayload).toBeUndefined();
    const release = await t.call('POST', `/api/v1/users/me/charges/${p.id}/release`, { headers: { 'x-user-key': p.user.key } });
    expect(release.status).toBe(200);
    expect(await balance(p.user.id)).toBe(1);
  });
});
