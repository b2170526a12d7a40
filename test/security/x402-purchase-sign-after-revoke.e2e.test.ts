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
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { usePurchaseFixture } from '../support/x402';

const t = useTestStack();
const x402 = usePurchaseFixture(t);
auditAfterAll();

type Purchase = { id: string; status: string; pendingReason: string | null; paymentPayload: unknown; error?: string };

/** A purchase above the grant's approvalAbove (202, no payment yet), approved by its payer. */
async function approvedPurchase() {
  const b = await x402.buyer({ grant: { limits: { total: 5 }, approvalAbove: 0.005 } });
  const made = await x402.buy<Purchase>(b, await x402.requirements());
  expect([made.status, made.body.paymentPayload]).toEqual([202, null]);
  const approved = await t.call('POST', `/api/v1/users/me/charges/${made.body.id}/approve`, { headers: { 'x-user-key': b.user.key } });
  expect(approved.status).toBe(200);
  return { ...b, id: made.body.id };
}

const read = (agentKey: string, id: string) => x402.read<Purchase>(agentKey, id);
const balance = (userId: string) => x402.usdcBalance(userId);

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
