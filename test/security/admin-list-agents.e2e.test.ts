/**
 * The operator's list of agents (`GET /api/v1/admin/agents`) names every agent and whether it may
 * charge: a map an attacker would like. Tried with every credential an attacker holds (none, an
 * agent key, a payer's key, an agent key where the admin key goes): each is 401 and names nothing.
 * And what the operator sees carries no key material: no agent key, no key hash (the agent item is
 * keyed by it), whatever the index it is read from projects.
 */
import { createHash } from 'node:crypto';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack();
auditAfterAll();

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

it('refuses every credential but the operator, and shows the operator no key material', async () => {
  const waiting = await t.call<{ apiKey: string; agentId: string }>('POST', '/api/v1/agents/register', {
    body: { name: `waiting-${Date.now()}`, email: 'dev@example.com', website: 'https://example.com' },
  });
  expect(waiting.status).toBe(201);
  const attacker = await t.enabledAgent();
  const payer = await t.fundedUser({ USD: 1 });

  // No x-admin-key at all is told which header to send; a wrong one is refused as the spec words it.
  const attempts: [Record<string, string>, string][] = [
    [{}, 'missing x-admin-key header'],
    [{ 'x-agent-key': attacker.key }, 'missing x-admin-key header'],
    [{ authorization: `Bearer ${attacker.key}` }, 'missing x-admin-key header'],
    [{ 'x-user-key': payer.key }, 'missing x-admin-key header'],
    [{ 'x-admin-key': attacker.key }, 'invalid admin key'],
    [{ 'x-admin-key': `${t.stack.adminKey.slice(0, -1)}x` }, 'invalid admin key'],
  ];
  for (const [headers, error] of attempts) {
    for (const query of ['', '?enabled=false', '?enabled=true&limit=100']) {
      const res = await t.call('GET', `/api/v1/admin/agents${query}`, { headers });
      expect({ status: res.status, body: res.body }).toEqual({ status: 401, body: { error } });
    }
  }

  const listed = await t.call<{ data: Record<string, unknown>[] }>('GET', '/api/v1/admin/agents?enabled=false', { headers: t.admin });
  expect(listed.status).toBe(200);
  expect(listed.body.data.map((a) => a.id)).toContain(waiting.body.agentId);
  const all = await t.call('GET', '/api/v1/admin/agents?limit=100', { headers: t.admin });
  for (const text of [listed.text, all.text]) {
    for (const key of [waiting.body.apiKey, attacker.key]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(sha256(key));
    }
    expect(text).not.toMatch(/ag_live_|AGENTKEY#|keyHash|"PK"|GSI/);
  }
  for (const agent of listed.body.data) {
    expect(Object.keys(agent).sort()).toEqual(['createdAt', 'email', 'enabled', 'id', 'name', 'website']);
  }
});
