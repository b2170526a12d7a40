/**
 * Grant requests (DESIGN §16, docs/grants.md): the agent asks, the payer allows or denies on the
 * consent page (form posts over HTTP here; test/browser/consent-page.e2e.test.ts drives a real
 * browser), and the agent's first read after approval takes the key, exactly once.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack({ AUTH_CACHE_TTL_MS: '0' });
auditAfterAll();

type GrantRequest = {
  id: string;
  status: string;
  consentUrl: string;
  expiresAt: string;
  grant: null | { id: string; key?: string; status: string; agent: { id: string }; limits: Record<string, number> };
  error?: string;
};
let seq = 0;
const ask = (agentKey: string, body: Record<string, unknown>, key = `gr-${process.pid}-${++seq}`) =>
  t.call<GrantRequest>('POST', '/api/v1/agents/grant-requests', { headers: { 'x-agent-key': agentKey, 'idempotency-key': key }, body });
const poll = (agentKey: string, id: string) =>
  t.call<GrantRequest>('GET', `/api/v1/agents/grant-requests/${id}`, { headers: { 'x-agent-key': agentKey } });

/** Posts the consent form as a browser would (not following the redirect). */
async function decide(url: string, fields: Record<string, string>) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

describe('grant requests', () => {
  it('asks, the payer allows with the account key, and the first read alone takes the key', async () => {
    const agent = await t.enabledAgent('consent-bot');
    const user = await t.fundedUser({ USD: 10 });
    const key = `ask-${Date.now()}`;
    const before = Date.now();
    const asked = await ask(
      agent.key,
      { currency: 'USD', limits: { perCharge: 5, total: 20 }, ttlSeconds: 86400, description: 'weather' },
      key,
    );
    expect(asked.status).toBe(201);
    expect(asked.body).toEqual({
      id: expect.stringMatching(/^gr01[0-9a-z]{24}$/),
      status: 'pending',
      consentUrl: expect.stringMatching(new RegExp(`^${t.stack.url}/consent/[A-Za-z0-9_-]{43}$`)),
      expiresAt: expect.any(String),
      grant: null,
    });
    expect(Math.abs(Date.parse(asked.body.expiresAt) - before - 15 * 60_000)).toBeLessThan(5000);
    // A replay answers the same request and link; the same key with other terms is refused.
    const replay = await ask(
      agent.key,
      { currency: 'USD', limits: { perCharge: 5, total: 20 }, ttlSeconds: 86400, description: 'weather' },
      key,
    );
    expect(replay.body).toEqual(asked.body);
    expect((await ask(agent.key, { currency: 'USDC' }, key)).status).toBe(422);
    expect((await poll(agent.key, asked.body.id)).body).toEqual(asked.body);

    const page = await fetch(asked.body.consentUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('same-origin');
    const text = await page.text();
    expect(text).toContain('consent-bot');
    expect(text).toContain('20.00 USD');
    expect(text).toContain('type="password"');
    expect(text).not.toContain('<script');

    // A wrong key: the page again, 400, nothing changed.
    for (const wrong of ['uk_live_nope', (await t.fundedUser()).key.replace('uk_', 'ug_'), '']) {
      const refused = await decide(asked.body.consentUrl, { action: 'allow', accountKey: wrong });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('invalid account key');
    }
    expect((await poll(agent.key, asked.body.id)).body.status).toBe('pending');

    const allowed = await decide(asked.body.consentUrl, { action: 'allow', accountKey: user.key });
    expect(allowed.status).toBe(303);
    // Concurrent first reads: exactly one carries the key.
    const reads = await Promise.all(Array.from({ length: 8 }, () => poll(agent.key, asked.body.id)));
    const withKey = reads.filter((r) => r.body.grant?.key !== undefined);
    expect(withKey).toHaveLength(1);
    for (const r of reads) expect(r.body).toMatchObject({ status: 'claimed', grant: { status: 'active', agent: { id: agent.id } } });
    const grantKey = withKey[0]?.body.grant?.key as string;
    expect(grantKey).toMatch(/^ug_live_/);
    const later = await poll(agent.key, asked.body.id);
    expect(later.body.grant?.key).toBeUndefined();
    expect(later.text).not.toContain('ug_live_');

    // The payer sees the grant; the grant key's hash is what was stored.
    const listed = await t.call<{ data: { id: string; limits: Record<string, number> }[] }>('GET', '/api/v1/users/me/grants', {
      headers: { 'x-user-key': user.key },
    });
    expect(listed.body.data).toEqual([expect.objectContaining({ id: later.body.grant?.id, limits: { perCharge: 5, total: 20 } })]);
    // The used link shows its final state and decides nothing more.
    expect(await (await fetch(asked.body.consentUrl)).text()).toContain('Allowed');
    expect((await decide(asked.body.consentUrl, { action: 'deny' })).status).toBe(303);
    expect((await poll(agent.key, asked.body.id)).body.status).toBe('claimed');
    // A grant key is no account key.
    expect((await t.call('GET', '/api/v1/users/me', { headers: { 'x-user-key': grantKey } })).status).toBe(401);
  });

  it('denies; expires; another agent’s request is not found; bad links are 404 pages', async () => {
    const agent = await t.enabledAgent();
    const other = await t.enabledAgent();
    const denied = (await ask(agent.key, { currency: 'USDC' })).body;
    expect((await decide(denied.consentUrl, { action: 'deny' })).status).toBe(303);
    expect((await poll(agent.key, denied.id)).body).toMatchObject({ status: 'denied', grant: null });
    expect(await (await fetch(denied.consentUrl)).text()).toContain('Denied');

    const late = (await ask(agent.key, { currency: 'USD' })).body;
    await db().send(
      new UpdateCommand({
        TableName: config().TABLE_NAME,
        Key: keys.grantRequest(agent.id, late.id),
        UpdateExpression: 'SET expiresAt = :past',
        ExpressionAttributeValues: { ':past': new Date(Date.now() - 1000).toISOString() },
      }),
    );
    expect((await poll(agent.key, late.id)).body.status).toBe('expired');
    expect(await (await fetch(late.consentUrl)).text()).toContain('Expired');
    const user = await t.fundedUser();
    expect((await decide(late.consentUrl, { action: 'allow', accountKey: user.key })).status).toBe(303);
    expect((await poll(agent.key, late.id)).body).toMatchObject({ status: 'expired', grant: null });

    for (const id of [denied.id, 'gr01jhx3k6v1f8q2n7c9m4p5r6s7', 'nope']) {
      const res = await poll(other.key, id);
      expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { error: 'grant request not found' } });
    }
    expect((await poll('ag_live_nope', denied.id)).status).toBe(401);
    expect(
      (await t.call('POST', '/api/v1/agents/grant-requests', { headers: { 'x-agent-key': agent.key }, body: { currency: 'USD' } })).body,
    ).toEqual({
      error: 'missing Idempotency-key',
    });
    expect((await ask(agent.key, { currency: 'USD', ttlSeconds: 10 })).body).toEqual({ error: 'ttlSeconds must be at least 60' });
    const bad = await fetch(`${t.stack.url}/consent/not-a-token`);
    expect(bad.status).toBe(404);
    expect((await decide(`${t.stack.url}/consent/not-a-token`, { action: 'deny' })).status).toBe(404);
  });
});
