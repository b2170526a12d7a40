/**
 * Attack: an agent earns from its payers (charges it should not have made, a payer approving a
 * charge by mistake), and is disabled. Before the fix nobody could give that money back: the
 * agent's own refund is 401 (it is disabled), the payer has no refund route, and the operator had
 * none either, so the earnings sat on a disabled agent for good.
 *
 * The property: the operator returns a disabled agent's earnings to its payers, charge by charge
 * (`POST /api/v1/admin/agents/{id}/charges/{chargeId}/refund`, or `npm run admin --
 * return-earnings <agentId>` walking them all), each one transaction from the agent's earned
 * balance to the payer's with its idempotency record, never more than was charged, and the ledger
 * audit holds after it (docs/lifecycle.md, "The operator returns a disabled agent's earnings").
 */
import { runAdmin } from '../../bin/operator/admin-cli';
import { adminAgentBody, meBody } from '../../functions/contracts/responses/accounts';
import { chargeBody } from '../../functions/contracts/responses/charges';
import { auditAfterAll, expectLedgerBalanced } from '../support/audit';
import { expectBody } from '../support/bodies';
import { useTestStack } from '../support/stack';

const t = useTestStack({ AUTH_CACHE_TTL_MS: '0' });

auditAfterAll();

interface ChargeBody {
  id: string;
  status: string;
  amount: number;
  refundedAmount: number;
  error?: string;
}

const userBalance = async (userKey: string) =>
  expectBody(await t.call('GET', '/api/v1/users/me', { headers: { 'x-user-key': userKey } }), meBody).balances;
const agentBalance = async (agentId: string) =>
  expectBody(await t.call('GET', `/api/v1/admin/agents/${agentId}`, { headers: t.admin }), adminAgentBody).balances;

async function charge(agentKey: string, userKey: string, amount: string, key: string): Promise<string> {
  const res = await t.call('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': key },
    raw: `{"amount":${amount},"currency":"USD","description":"earned"}`,
  });
  expect(res.status).toBe(201);
  return expectBody(res, chargeBody).id;
}

const operatorRefund = (agentId: string, chargeId: string, key: string, body = '{}') =>
  t.call<ChargeBody>('POST', `/api/v1/admin/agents/${agentId}/charges/${chargeId}/refund`, {
    headers: { ...t.admin, 'idempotency-key': key },
    raw: body,
  });

/** `npm run admin -- <args> --api <stack> --admin-key <key>`, in-process. */
async function admin(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin([...args, '--api', t.stack.url, '--admin-key', t.stack.adminKey], {
    out: (text) => out.push(text),
    err: (text) => err.push(text),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('the operator returns a disabled agent’s earnings to its payers', () => {
  it('one charge by the admin route, then the rest by return-earnings; nothing twice, the audit holds', async () => {
    const agent = await t.enabledAgent();
    const first = await t.fundedUser({ USD: '10' });
    const second = await t.fundedUser({ USD: '10' });
    const a = await charge(agent.key, first.key, '3', `a-${agent.id}`);
    const b = await charge(agent.key, first.key, '2', `b-${agent.id}`);
    const c = await charge(agent.key, second.key, '4', `c-${agent.id}`);
    // The agent gave 0.50 of the first back itself while it could.
    const own = await t.call<ChargeBody>('POST', `/api/v1/agents/charge/${a}/refund`, {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': `own-${a}` },
      raw: '{"amount":0.5}',
    });
    expect(own.status).toBe(200);
    expect(await agentBalance(agent.id)).toMatchObject({ USD: 8.5 });

    const off = await t.call('PATCH', `/api/v1/admin/agents/${agent.id}`, { headers: t.admin, body: { enabled: false } });
    expect(off.status).toBe(200);
    // The agent can no longer give anything back.
    const refused = await t.call('POST', `/api/v1/agents/charge/${c}/refund`, {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': `own-${c}` },
      raw: '{}',
    });
    expect(refused.status).toBe(401);

    // The operator returns the second payer's charge.
    const returned = await operatorRefund(agent.id, c, `op-${c}`);
    expect([returned.status, returned.body.status, returned.body.refundedAmount]).toEqual([200, 'SUCCESS', 4]);
    expect(await userBalance(second.key)).toMatchObject({ USD: 10 });
    expect(await agentBalance(agent.id)).toMatchObject({ USD: 4.5 });
    // Again with its key: replayed; again with another key: nothing is left of it.
    const replay = await operatorRefund(agent.id, c, `op-${c}`);
    expect([replay.status, replay.text, replay.headers.get('idempotent-replayed')]).toEqual([200, returned.text, 'true']);
    const more = await operatorRefund(agent.id, c, `op2-${c}`);
    expect([more.status, more.body]).toEqual([400, { error: 'amount exceeds refundable amount' }]);
    // Another agent's charge under this agent's id is not found.
    const elsewhere = await t.earningAgent({ USD: 1 });
    const foreign = await operatorRefund(elsewhere.id, c, `foreign-${c}`);
    expect([foreign.status, foreign.body]).toEqual([404, { error: 'charge not found' }]);
    await expectLedgerBalanced();

    // The rest, by the walk: 2.50 left of the first charge and all of the second, to the first payer.
    const walk = await admin('return-earnings', agent.id);
    expect(walk.code).toBe(0);
    const report = JSON.parse(walk.out) as { returned: { chargeId: string; refundedAmount: number }[]; refused: unknown[] };
    expect(report.refused).toEqual([]);
    expect(report.returned.map((r) => [r.chargeId, r.refundedAmount]).sort()).toEqual(
      [
        [a, 3],
        [b, 2],
      ].sort(),
    );
    expect(await userBalance(first.key)).toMatchObject({ USD: 10 });
    expect(await agentBalance(agent.id)).toMatchObject({ USD: 0 });
    // Run again: every charge is fully returned, nothing moves.
    const again = await admin('return-earnings', agent.id);
    expect([again.code, JSON.parse(again.out)]).toEqual([0, { agentId: agent.id, returned: [], refused: [] }]);
    expect(await userBalance(first.key)).toMatchObject({ USD: 10 });
    await expectLedgerBalanced();
  });

  it('a part, then more than is left: refused with 400; the payer gets back exactly what was returned', async () => {
    const agent = await t.enabledAgent();
    const payer = await t.fundedUser({ USD: '10' });
    const id = await charge(agent.key, payer.key, '5', `w-${agent.id}`);
    await t.call('PATCH', `/api/v1/admin/agents/${agent.id}`, { headers: t.admin, body: { enabled: false } });
    const res = await operatorRefund(agent.id, id, `op-part-${id}`, '{"amount":1.25}');
    expect([res.status, res.body.refundedAmount]).toEqual([200, 1.25]);
    const tooMuch = await operatorRefund(agent.id, id, `op-more-${id}`, '{"amount":4}');
    expect([tooMuch.status, tooMuch.body]).toEqual([400, { error: 'amount exceeds refundable amount' }]);
    expect(await userBalance(payer.key)).toMatchObject({ USD: 6.25 });
    await expectLedgerBalanced();
  });
});
