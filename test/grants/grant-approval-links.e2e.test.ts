/**
 * Approval links reach only the payer for a charge made with a grant key (DESIGN §16): the
 * agent's 202 and its GET carry `approvalUrl: null`; the payer's `charge.approval_requested`
 * webhook carries the link, and so does each PENDING user_approval charge in the payer's history,
 * and the link works. An account-key charge keeps the legacy path (the agent gets the link).
 */
import { chargeBody, pendingChargeBody, userChargeListBody } from '../../functions/contracts/responses/charges';
import { createdGrantBody } from '../../functions/contracts/responses/grants';
import { auditAfterAll } from '../support/audit';
import { expectBody } from '../support/bodies';
import { useTestStack } from '../support/stack';
import { eventOf, type Received, type Receiver, startReceiver } from '../webhooks/receiver';

const t = useTestStack({}, { webhooks: { visibilityTimeoutSeconds: 2, pollIntervalMs: 50 } });
let userRx: Receiver;
beforeAll(async () => {
  userRx = await startReceiver();
});
afterAll(async () => {
  await userRx?.stop();
});
auditAfterAll();

let n = 0;
const idem = () => `gl-${Date.now()}-${++n}`;

describe('approval links of grant charges', () => {
  it("reach the payer only: the agent sees null, the payer's webhook and PENDING history carry the link, which works", async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 20 });
    const hook = await t.call('POST', '/api/v1/users/me/webhooks', { headers: { 'x-user-key': user.key }, body: { url: userRx.url } });
    expect(hook.status).toBe(201);
    const grant = expectBody(
      await t.call('POST', '/api/v1/users/me/grants', {
        headers: { 'x-user-key': user.key },
        body: { agentId: agent.id, currency: 'USD', approvalAbove: 1 },
      }),
      createdGrantBody,
    );
    const answer = await t.call('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': agent.key, 'x-user-key': grant.key, 'idempotency-key': idem() },
      body: { amount: 2, currency: 'USD', description: 'needs the payer' },
    });
    const made = expectBody(answer, pendingChargeBody, 202);
    expect(made.approvalUrl).toBeNull();
    expect(answer.text).not.toContain('/approve/');
    const read = await t.call('GET', `/api/v1/agents/charge/${made.id}`, { headers: { 'x-agent-key': agent.key } });
    expect(read.text).not.toContain('/approve/');

    const event = await userRx.waitFor(
      (r: Received) => eventOf(r).type === 'charge.approval_requested' && eventOf(r).data.id === made.id,
      5_000,
    );
    const link = (eventOf(event).data as { approvalUrl?: string }).approvalUrl;
    expect(link).toMatch(/\/approve\/[^/]+$/);

    const history = expectBody(
      await t.call('GET', '/api/v1/users/me/charges?status=PENDING', { headers: { 'x-user-key': user.key } }),
      userChargeListBody,
      200,
    );
    const listed = history.data.find((c) => c.id === made.id);
    expect(listed).toMatchObject({ pendingReason: 'user_approval', approvalUrl: link, grantId: grant.id });

    const approved = await fetch(link ?? '', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=approve',
      redirect: 'manual',
    });
    expect(approved.status).toBeLessThan(400);
    const after = expectBody(
      await t.call('GET', `/api/v1/agents/charge/${made.id}`, { headers: { 'x-agent-key': agent.key } }),
      chargeBody,
    );
    expect(after.status).toBe('SUCCESS');
    // Decided: no longer PENDING, no link in the history.
    const all = expectBody(await t.call('GET', '/api/v1/users/me/charges', { headers: { 'x-user-key': user.key } }), userChargeListBody);
    expect(all.data.find((c) => c.id === made.id)).not.toHaveProperty('approvalUrl');
  });

  it('an account-key charge keeps the legacy path: the agent gets the link', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 20 });
    await t.call('PUT', '/api/v1/users/me/policy', { headers: { 'x-user-key': user.key }, body: { approvalAbove: { USD: 1 } } });
    const made = expectBody(
      await t.call('POST', '/api/v1/agents/charges', {
        headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': idem() },
        body: { amount: 2, currency: 'USD', description: 'legacy' },
      }),
      pendingChargeBody,
      202,
    );
    expect(made.approvalUrl).toMatch(/\/approve\/[^/]+$/);
    const history = expectBody(
      await t.call('GET', '/api/v1/users/me/charges?status=PENDING', { headers: { 'x-user-key': user.key } }),
      userChargeListBody,
    );
    expect(history.data.find((c) => c.id === made.id)?.approvalUrl).toBe(made.approvalUrl);
  });
});
