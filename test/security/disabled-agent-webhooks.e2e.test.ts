/**
 * Left after the grant-request claim was fixed: an agent's key is cached in each container for up
 * to `AUTH_CACHE_TTL_MS` (30 s), and the agent webhook routes trusted that cache. The operator
 * disables an agent, or the agent's key leaks and is rotated, in another container; this one
 * still has the old answer.
 *
 * The attacker is the disabled agent, or whoever holds the rotated-away key: through the warm
 * container it registers its own endpoint (and so takes a signing secret and the agent's events
 * from then on), deletes the agent's endpoint, or sends test pings to it.
 *
 * The property: each is 401 `invalid or disabled agent key` and changes nothing: no endpoint, no
 * secret, the agent's endpoint still there, no ping queued. The agent's current key, enabled,
 * registers as before.
 */
import { AGENT_KEY_PREFIX, generateKey, hashKey } from '../../functions/core/keys';
import { moveAgentKey, setAgentEnabled } from '../../functions/store/identity/agent.repository';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

// The default cache: an agent key stays warm for 30 s.
const t = useTestStack();
auditAfterAll();

const refused = { status: 401, body: { error: 'invalid or disabled agent key' } };
const url = 'http://127.0.0.1:9/hook';
type Hook = { id: string; secret?: string };

const headers = (key: string) => ({ 'x-agent-key': key });
const create = (key: string) => t.call<Hook>('POST', '/api/v1/agents/webhooks', { headers: headers(key), body: { url } });
const list = async (key: string) =>
  (await t.call<{ webhooks: Hook[] }>('GET', '/api/v1/agents/webhooks', { headers: headers(key) })).body.webhooks.map((w) => w.id);

/** An enabled agent with one endpoint, its key warm in this container's cache. */
async function agentWithEndpoint() {
  const agent = await t.enabledAgent();
  const made = await create(agent.key);
  expect(made.status).toBe(201);
  return { agent, hook: made.body };
}

/**
 * What the stale key tries, one route per agent: the first refusal makes this container forget the
 * key, so each route is tried while the cache still holds the old answer.
 */
const attempts = {
  create: async (key: string) => {
    const made = await create(key);
    expect(made.text).not.toContain('whsec_');
    return made;
  },
  delete: (key: string, hookId: string) => t.call('DELETE', `/api/v1/agents/webhooks/${hookId}`, { headers: headers(key) }),
  test: (key: string, hookId: string) => t.call('POST', `/api/v1/agents/webhooks/${hookId}/test`, { headers: headers(key) }),
};
const routes = Object.keys(attempts) as (keyof typeof attempts)[];

describe('agent webhook endpoints are written only by the agent’s current, enabled key', () => {
  it.each(routes)('%s: refuses a disabled agent whose key this container still has cached; enabled again, it registers', async (route) => {
    const { agent, hook } = await agentWithEndpoint();
    // Disabled in another container: this one's cache is not told.
    expect(await setAgentEnabled(agent.id, false)).toBeDefined();

    const res = await attempts[route](agent.key, hook.id);
    expect([res.status, res.body]).toEqual([refused.status, refused.body]);

    await setAgentEnabled(agent.id, true);
    // The refusal made this container forget the key; its fresh lookup cached "disabled", for 1 s.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await list(agent.key)).toEqual([hook.id]);
    expect((await create(agent.key)).status).toBe(201);
  });

  it.each(
    routes,
  )('%s: refuses the rotated-away key this container still has cached; the new key sees only its own endpoint', async (route) => {
    const { agent, hook } = await agentWithEndpoint();
    // The agent's key leaked and was rotated in another container.
    const newKey = generateKey(AGENT_KEY_PREFIX);
    expect(await moveAgentKey(hashKey(agent.key), hashKey(newKey), new Date())).toBeDefined();

    const res = await attempts[route](agent.key, hook.id);
    expect([res.status, res.body]).toEqual([refused.status, refused.body]);

    expect(await list(newKey)).toEqual([hook.id]);
    expect((await create(newKey)).status).toBe(201);
  });
});
