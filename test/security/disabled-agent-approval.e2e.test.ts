/**
 * Issue 29, "disabling an agent must stop its money": the payer could still approve a disabled
 * agent's PENDING charge, and the money went to it (the approval page and
 * `/users/me/charges/{id}/approve` settled without the kill switch; only the agent's own capture
 * had it). The attacker is the agent the operator disabled; its charges were already waiting for
 * the payer, who approves them on the page and through the API.
 *
 * The property: an approval to a disabled agent is refused by the approval's own transaction (403
 * `agent disabled`, the page saying why in words, with only Decline to press), nothing moves, and
 * the payer can still decline; enabled again, the agent's charges can be approved as before.
 */
import { auditAfterAll } from '../support/audit';
import { afterCommand, inputText } from '../support/interleave';
import { useTestStack } from '../support/stack';

const t = useTestStack();
auditAfterAll();

type Charge = { id: string; status: string; pendingReason: string | null; approvalUrl?: string | null };
type Me = { balances: { USD: number }; held: { USD: number } };
let n = 0;
const idem = () => `disabled-${Date.now()}-${++n}`;

const postForm = (url: string, action: 'approve' | 'decline') =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `action=${action}`,
    redirect: 'manual',
  });

/** A payer whose policy sends charges above 1 USD to them, an agent, and two charges waiting: a plain one and a hold. */
async function waitingCharges() {
  const user = await t.fundedUser({ USD: 20 });
  const agent = await t.enabledAgent();
  const policy = await t.call('PUT', '/api/v1/users/me/policy', {
    headers: { 'x-user-key': user.key },
    body: { approvalAbove: { USD: 1 } },
  });
  expect(policy.status).toBe(200);
  const make = async (body: Record<string, unknown>) => {
    const res = await t.call<Charge>('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': idem() },
      body: { currency: 'USD', description: 'work done', ...body },
    });
    expect(res.status).toBe(202);
    return res.body;
  };
  const plain = await make({ amount: 5 });
  const hold = await make({ amount: 4, capture: false });
  return { user, agent, plain, hold };
}

const me = async (userKey: string) => (await t.call<Me>('GET', '/api/v1/users/me', { headers: { 'x-user-key': userKey } })).body;
const earned = async (agentId: string) =>
  (await t.call<{ balances: { USD: number } }>('GET', `/api/v1/admin/agents/${agentId}`, { headers: t.admin })).body.balances;
const disable = async (agentId: string, enabled = false) => {
  const res = await t.call('PATCH', `/api/v1/admin/agents/${agentId}`, { headers: t.admin, body: { enabled } });
  expect(res.status).toBe(200);
};
const approveByApi = (userKey: string, id: string) =>
  t.call<Charge>('POST', `/api/v1/users/me/charges/${id}/approve`, { headers: { 'x-user-key': userKey } });
const statusOf = async (id: string) => (await t.call<Charge>('GET', `/api/v1/admin/charges/${id}`, { headers: t.admin })).body;

describe('an approval to a disabled agent', () => {
  it('through the user API: 403 agent disabled, nothing moves; declined, the hold comes back; enabled again, approved as before', async () => {
    const { user, agent, plain, hold } = await waitingCharges();
    const before = await earned(agent.id);
    await disable(agent.id);
    for (const charge of [plain, hold]) {
      const res = await approveByApi(user.key, charge.id);
      expect([charge.id, res.status, res.body]).toEqual([charge.id, 403, { error: 'agent disabled' }]);
      expect(await statusOf(charge.id)).toMatchObject({ status: 'PENDING', pendingReason: 'user_approval' });
    }
    expect(await me(user.key)).toMatchObject({ balances: { USD: 11 }, held: { USD: 9 } });
    expect(await earned(agent.id)).toEqual(before);

    const declined = await t.call<Charge>('POST', `/api/v1/users/me/charges/${hold.id}/decline`, { headers: { 'x-user-key': user.key } });
    expect([declined.status, declined.body.status]).toEqual([200, 'FAILED']);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 15 }, held: { USD: 5 } });

    await disable(agent.id, true);
    const approved = await approveByApi(user.key, plain.id);
    expect([approved.status, approved.body.status]).toEqual([200, 'SUCCESS']);
  });

  it('on the approval page: the page says why and offers only Decline; a pressed Approve is 403 with the reason; Decline works', async () => {
    const { user, agent, plain, hold } = await waitingCharges();
    const before = await earned(agent.id);
    // The page opened while the agent was still enabled: Approve is there.
    const opened = await (await fetch(plain.approvalUrl ?? '')).text();
    expect(opened).toMatch(/<button[^>]*value="approve"/);
    await disable(agent.id);

    for (const charge of [plain, hold]) {
      // The stale tab's Approve.
      const pressed = await postForm(charge.approvalUrl ?? '', 'approve');
      const text = await pressed.text();
      expect([charge.id, pressed.status]).toEqual([charge.id, 403]);
      expect(text).toContain('the agent has been disabled');
      expect(text).not.toMatch(/<button[^>]*value="approve"/);
      expect(pressed.headers.get('cache-control')).toBe('no-store');
      expect(await statusOf(charge.id)).toMatchObject({ status: 'PENDING', pendingReason: 'user_approval' });
    }
    const reopened = await fetch(plain.approvalUrl ?? '');
    const shown = await reopened.text();
    expect(reopened.status).toBe(200);
    expect(shown).toContain('the agent has been disabled');
    expect(shown).toMatch(/<button[^>]*value="decline"/);
    expect(shown).not.toMatch(/<button[^>]*value="approve"/);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 11 }, held: { USD: 9 } });
    expect(await earned(agent.id)).toEqual(before);

    expect((await postForm(plain.approvalUrl ?? '', 'decline')).status).toBe(303);
    expect(await statusOf(plain.id)).toMatchObject({ status: 'FAILED', failureReason: 'declined by user' });
    expect(await me(user.key)).toMatchObject({ balances: { USD: 16 }, held: { USD: 4 } });
  });

  it('disabled between the approval reading the charge and its transaction: refused by the transaction itself, nothing moves', async () => {
    const { user, agent, plain, hold } = await waitingCharges();
    const before = await earned(agent.id);
    for (const charge of [plain, hold]) {
      // The approval has read the charge's pending marker (no kill switch in it): the operator disables the agent now.
      const between = afterCommand({
        command: 'GetItemCommand',
        match: (input) => inputText(input).includes(`PENDINGCHARGE#${charge.id}`),
        between: () => disable(agent.id),
      });
      const res = await approveByApi(user.key, charge.id).finally(() => between.remove());
      expect(between.fired()).toBe(true);
      expect([res.status, res.body]).toEqual([403, { error: 'agent disabled' }]);
      await disable(agent.id, true);
    }
    await disable(agent.id);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 11 }, held: { USD: 9 } });
    expect(await earned(agent.id)).toEqual(before);
  });
});
