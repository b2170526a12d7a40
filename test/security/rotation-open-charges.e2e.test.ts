/**
 * Issue 29 red team, after finding 6's fix: rotating the account key ends the grants and webhooks
 * the old key made, but not the charges it made still open. The attacker holds the payer's leaked
 * account key and an agent of its own: it charges 5.00 above the payer's `approvalAbove` (the 202
 * gives an account-key charge's agent the approval link) and holds 4.00 (`capture: false`). The
 * payer rotates. Then the attacker approves its charge with the link it was given, and captures its
 * hold.
 *
 * The property: after the rotation nothing the old key opened pays its agent: the approval link and
 * the capture are refused, the payer's money stays theirs, and the rotation says what it ended.
 */
import { agentBalanceBody, meBody, rotatedUserKeyBody } from '../../functions/contracts/responses/accounts';
import { userChargeListBody } from '../../functions/contracts/responses/charges';
import { auditAfterAll } from '../support/audit';
import { expectBody } from '../support/bodies';
import { useTestStack } from '../support/stack';

const t = useTestStack();
auditAfterAll();

type Charge = { id: string; status: string; failureReason?: string | null; approvalUrl?: string | null };
let n = 0;
const idem = () => `rotation-open-${Date.now()}-${++n}`;

const usd = async (userKey: string) =>
  expectBody(await t.call('GET', '/api/v1/users/me', { headers: { 'x-user-key': userKey } }), meBody).balances.USD;

describe('rotating the account key ends the charges the old key left open', () => {
  it("refuses the thief's approval link and capture after the rotation; the payer's money stays theirs", async () => {
    const payer = await t.fundedUser({ USD: 20 });
    const thief = await t.enabledAgent();
    const policy = await t.call('PUT', '/api/v1/users/me/policy', {
      headers: { 'x-user-key': payer.key },
      body: { approvalAbove: { USD: 3 } },
    });
    expect(policy.status).toBe(200);

    // With the leaked key: a charge that waits for approval (its link comes back to the agent), and a hold.
    const asThief = (body: Record<string, unknown>) =>
      t.call<Charge>('POST', '/api/v1/agents/charges', {
        headers: { 'x-agent-key': thief.key, 'x-user-key': payer.key, 'idempotency-key': idem() },
        body: { currency: 'USD', description: 'work', ...body },
      });
    const pending = await asThief({ amount: 5 });
    expect(pending.status).toBe(202);
    expect(pending.body.approvalUrl).toMatch(/\/approve\//);
    const hold = await asThief({ amount: 2, capture: false });
    expect(hold.status).toBe(201);
    expect(await usd(payer.key)).toBe(13);

    const rotated = expectBody(
      await t.call('POST', '/api/v1/users/me/keys/rotate', { headers: { 'x-user-key': payer.key } }),
      rotatedUserKeyBody,
      200,
    );
    const newKey = rotated.userKey;
    expect(rotated.releasedCharges.map((c) => [c.id, c.status, c.failureReason]).sort()).toEqual(
      [
        [pending.body.id, 'FAILED', 'account key rotated'],
        [hold.body.id, 'FAILED', 'account key rotated'],
      ].sort(),
    );

    const approved = await fetch(pending.body.approvalUrl ?? '', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=approve',
      redirect: 'manual',
    });
    await approved.text();
    const captured = await t.call<Charge>('POST', `/api/v1/agents/charge/${hold.body.id}/capture`, {
      headers: { 'x-agent-key': thief.key, 'idempotency-key': idem() },
      body: {},
    });

    const balance = expectBody(await t.call('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': thief.key } }), agentBalanceBody);
    expect(balance.balances.USD).toBe(0);
    expect(captured.status).toBe(409);
    expect(await usd(newKey)).toBe(20);
    const history = expectBody(await t.call('GET', '/api/v1/users/me/charges', { headers: { 'x-user-key': newKey } }), userChargeListBody);
    for (const id of [pending.body.id, hold.body.id]) {
      expect(history.data.find((c) => c.id === id)).toMatchObject({ status: 'FAILED', failureReason: 'account key rotated' });
    }
  });
});
