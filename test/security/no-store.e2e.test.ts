/**
 * Issue 29, low finding: API answers that carry keys or approval links had no `Cache-Control:
 * no-store`, so a shared proxy, a CDN in front of the API or a browser's disk cache could keep an
 * agent key, an account or grant key, a webhook secret or an approval link. The attacker is
 * whoever reads that cache later.
 *
 * The property (decided: docs/approvals.md "Caching"): every API answer carries `Cache-Control:
 * no-store` — those below carrying a secret or a link, and every other answer too, errors
 * included, since none is worth caching — except the public OpenAPI document, which carries
 * nothing secret and may be cached.
 */
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { startReceiver } from '../webhooks/receiver';

const t = useTestStack();
auditAfterAll();

let n = 0;
const idem = () => `no-store-${Date.now()}-${++n}`;

/** The answers, each named, whose Cache-Control must be no-store. */
const answers: [string, Headers][] = [];
const seen = <T extends { headers: Headers }>(what: string, reply: T): T => {
  answers.push([what, reply.headers]);
  return reply;
};

describe('Cache-Control: no-store', () => {
  it('on every answer that carries a key, a secret or an approval link, and on every other API answer', async () => {
    const registered = seen(
      'agent registration (apiKey)',
      await t.call<{ agentId: string; apiKey: string }>('POST', '/api/v1/agents/register', {
        body: { name: `no-store-${Date.now()}`, email: 'dev@example.com', website: 'https://example.com' },
      }),
    );
    seen(
      'admin enable',
      await t.call('PATCH', `/api/v1/admin/agents/${registered.body.agentId}`, { headers: t.admin, body: { enabled: true } }),
    );
    let agentKey = registered.body.apiKey;
    const rotatedAgent = seen(
      'agent key rotation',
      await t.call<{ apiKey: string }>('POST', '/api/v1/agents/keys/rotate', { headers: { 'x-agent-key': agentKey } }),
    );
    agentKey = rotatedAgent.body.apiKey;
    const user = seen(
      'user creation (userKey)',
      await t.call<{ id: string; userKey: string }>('POST', '/api/v1/admin/users', { headers: t.admin }),
    );
    seen(
      'admin credit',
      await t.call('POST', `/api/v1/admin/users/${user.body.id}/credits`, {
        headers: { ...t.admin, 'idempotency-key': idem() },
        body: { amount: 50, currency: 'USD' },
      }),
    );
    let userKey = user.body.userKey;
    userKey = seen(
      'account key rotation',
      await t.call<{ userKey: string }>('POST', '/api/v1/users/me/keys/rotate', { headers: { 'x-user-key': userKey } }),
    ).body.userKey;
    userKey = seen(
      "the operator's account key rotation",
      await t.call<{ userKey: string }>('POST', `/api/v1/admin/users/${user.body.id}/keys/rotate`, { headers: t.admin }),
    ).body.userKey;
    const grant = seen(
      'grant creation (key)',
      await t.call<{ key: string }>('POST', '/api/v1/users/me/grants', {
        headers: { 'x-user-key': userKey },
        body: { agentId: registered.body.agentId, currency: 'USD', approvalAbove: 1 },
      }),
    );
    seen(
      'a grant charge waiting for the payer',
      await t.call('POST', '/api/v1/agents/charges', {
        headers: { 'x-agent-key': agentKey, 'x-user-key': grant.body.key, 'idempotency-key': idem() },
        body: { amount: 2, currency: 'USD', description: 'grant' },
      }),
    );
    await t.call('PUT', '/api/v1/users/me/policy', { headers: { 'x-user-key': userKey }, body: { approvalAbove: { USD: 1 } } });
    const key = idem();
    const body = { amount: 2, currency: 'USD', description: 'legacy' };
    const legacy = seen(
      'a 202 with approvalUrl',
      await t.call<{ approvalUrl: string }>('POST', '/api/v1/agents/charges', {
        headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': key },
        body,
      }),
    );
    expect(legacy.body.approvalUrl).toMatch(/\/approve\//);
    seen(
      'its replay',
      await t.call('POST', '/api/v1/agents/charges', {
        headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': key },
        body,
      }),
    );
    seen(
      "the payer's PENDING charges with approvalUrl",
      await t.call('GET', '/api/v1/users/me/charges?status=PENDING', { headers: { 'x-user-key': userKey } }),
    );
    const receiver = await startReceiver();
    try {
      seen(
        'webhook registration (secret)',
        await t.call('POST', '/api/v1/users/me/webhooks', { headers: { 'x-user-key': userKey }, body: { url: receiver.url } }),
      );
      seen(
        'agent webhook registration (secret)',
        await t.call('POST', '/api/v1/agents/webhooks', { headers: { 'x-agent-key': agentKey }, body: { url: receiver.url } }),
      );
    } finally {
      await receiver.stop();
    }

    // A grant request the payer allows: its first read carries the grant key.
    const asked = seen(
      'grant request',
      await t.call<{ id: string; consentUrl: string }>('POST', '/api/v1/agents/grant-requests', {
        headers: { 'x-agent-key': agentKey, 'idempotency-key': idem() },
        body: { currency: 'USD' },
      }),
    );
    const allowed = await fetch(asked.body.consentUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ action: 'allow', accountKey: userKey }).toString(),
      redirect: 'manual',
    });
    expect(allowed.status).toBe(303);
    const claimed = seen(
      'grant request read with its key',
      await t.call<{ grant: { key?: string } }>('GET', `/api/v1/agents/grant-requests/${asked.body.id}`, {
        headers: { 'x-agent-key': agentKey },
      }),
    );
    expect(claimed.body.grant.key).toMatch(/^ug_live_/);

    // Answers without a secret, and errors: the same header, nothing relies on caching them.
    seen('GET /users/me', await t.call('GET', '/api/v1/users/me', { headers: { 'x-user-key': userKey } }));
    seen('a 401', await t.call('GET', '/api/v1/users/me', { headers: { 'x-user-key': 'uk_live_nobody' } }));
    seen('a 404', await t.call('GET', '/api/v1/no-such-route'));
    seen('/health', await t.call('GET', '/health'));
    seen(
      'POST /mcp',
      await t.call('POST', '/mcp', {
        headers: { accept: 'application/json, text/event-stream', 'x-agent-key': agentKey },
        body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      }),
    );

    expect(answers.map(([what, headers]) => [what, headers.get('cache-control')])).toEqual(answers.map(([what]) => [what, 'no-store']));
  });

  it('but the public OpenAPI document may be cached', async () => {
    const doc = await t.call('GET', '/api/v1/openapi.json');
    expect(doc.headers.get('cache-control')).toBe('public, max-age=300');
  });
});
