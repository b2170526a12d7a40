/**
 * Left since issue 29: an agent's key is cached in each container for up to `AUTH_CACHE_TTL_MS`
 * (30 s), and the grant request's claim (the agent's first GET after the payer allowed it, the only
 * answer ever to carry the grant key) trusted that cache. The operator disables the agent, or the
 * agent's key leaks and is rotated, in another container; this one still has the old answer.
 *
 * The attacker is the disabled agent, or whoever holds the rotated-away key: it asked for a grant,
 * the payer allowed it, and it GETs the request through the warm container.
 *
 * The property: the claim hands the key only to the agent's current key while the agent is enabled,
 * decided by the claim's own write (never a cache): otherwise 401 `invalid or disabled agent key`,
 * no key in the answer, and the request stays `approved`, so the agent's current key, enabled,
 * still takes the key, once.
 */
import { AGENT_KEY_PREFIX, generateKey, hashKey } from '../../functions/core/keys';
import { moveAgentKey, setAgentEnabled } from '../../functions/store/identity/agent.repository';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

// The default cache: an agent key stays warm for 30 s.
const t = useTestStack();
auditAfterAll();

type GrantRequest = { id: string; status: string; consentUrl: string; grant: null | { id: string; key?: string; status: string } };
let seq = 0;
const ask = (agentKey: string) =>
  t.call<GrantRequest>('POST', '/api/v1/agents/grant-requests', {
    headers: { 'x-agent-key': agentKey, 'idempotency-key': `claim-${process.pid}-${++seq}` },
    body: { currency: 'USD', limits: { total: 20 } },
  });
const poll = (agentKey: string, id: string) =>
  t.call<GrantRequest>('GET', `/api/v1/agents/grant-requests/${id}`, { headers: { 'x-agent-key': agentKey } });

/** An enabled agent's request, allowed by a payer on the consent page; the agent's key warm in this container's cache. */
async function allowedRequest() {
  const agent = await t.enabledAgent();
  const payer = await t.fundedUser({ USD: 10 });
  const asked = await ask(agent.key);
  expect(asked.status).toBe(201);
  const allowed = await fetch(asked.body.consentUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ action: 'allow', accountKey: payer.key }).toString(),
    redirect: 'manual',
  });
  expect(allowed.status).toBe(303);
  return { agent, payer, request: asked.body };
}

const refused = { status: 401, body: { error: 'invalid or disabled agent key' } };

describe('a grant request’s key is claimed only by the agent’s current, enabled key', () => {
  it('refuses a disabled agent whose key this container still has cached; enabled again, it claims the key once', async () => {
    const { agent, request } = await allowedRequest();
    // Disabled in another container: this one's cache is not told.
    expect(await setAgentEnabled(agent.id, false)).toBeDefined();

    const res = await poll(agent.key, request.id);
    expect([res.status, res.body]).toEqual([refused.status, refused.body]);
    expect(res.text).not.toContain('ug_live_');

    await setAgentEnabled(agent.id, true);
    const claimed = await poll(agent.key, request.id);
    expect(claimed.status).toBe(200);
    expect(claimed.body).toMatchObject({ status: 'claimed', grant: { status: 'active', key: expect.stringMatching(/^ug_live_/) } });
    expect((await poll(agent.key, request.id)).body.grant?.key).toBeUndefined();
  });

  it('refuses the rotated-away key this container still has cached; the new key claims the grant key', async () => {
    const { agent, request } = await allowedRequest();
    // The agent's key leaked and was rotated in another container.
    const newKey = generateKey(AGENT_KEY_PREFIX);
    expect(await moveAgentKey(hashKey(agent.key), hashKey(newKey), new Date())).toBeDefined();

    const res = await poll(agent.key, request.id);
    expect([res.status, res.body]).toEqual([refused.status, refused.body]);
    expect(res.text).not.toContain('ug_live_');

    const claimed = await poll(newKey, request.id);
    expect(claimed.status).toBe(200);
    expect(claimed.body).toMatchObject({ status: 'claimed', grant: { status: 'active', key: expect.stringMatching(/^ug_live_/) } });
  });
});
