/**
 * The console's session rules (DESIGN §21, docs/console.md "Security"), attacked over HTTP: a
 * signed-out cookie, a POST without the session's CSRF token, a POST from another origin (or none),
 * another payer's charge id in an Approve URL, the cookie's flags, the headers of every page, the idle
 * and absolute timeouts, single-use passkey challenges (limits: console-limits.e2e.test.ts). Each refusal changes nothing.
 */

import { hashKey } from '../../functions/core/keys';
import { dynamoRequestCounts, resetDynamoRequestCounts } from '../../functions/store/client';
import { resolveSession, SESSION_ABSOLUTE_MS, SESSION_IDLE_MS, startSession } from '../../functions/use-cases/identity/console-sessions';
import { startConsoleStack } from '../browser/console';
import { auditAfterAll } from '../support/audit';
import type { TestStack } from '../support/stack';
import { createTestTable } from '../support/table';

let t: TestStack & { base: string };
beforeAll(async () => {
  await createTestTable();
  t = await startConsoleStack();
});
afterAll(async () => {
  await t?.stack.stop();
});
auditAfterAll();

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

interface Signed {
  cookie: string;
  value: string;
  csrf: string;
}

const get = (path: string, cookie?: string) => fetch(`${t.base}${path}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });

const post = (path: string, form: Record<string, string>, opts: { cookie?: string; origin?: string | null; address?: string } = {}) =>
  fetch(`${t.base}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(opts.origin === null ? {} : { origin: opts.origin ?? t.base }),
      ...(opts.cookie ? { cookie: opts.cookie } : {}),
    },
    body: new URLSearchParams(form).toString(),
  });

async function signIn(accountKey: string): Promise<Signed> {
  const res = await post('/console/login', { accountKey });
  expect(res.status).toBe(303);
  const set = res.headers.getSetCookie()[0] ?? '';
  const value = /^console=([^;]+)/.exec(set)?.[1] ?? '';
  const cookie = `console=${value}`;
  const page = await (await get('/console', cookie)).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
  expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return { cookie, value, csrf };
}

async function pendingCharge(userKey: string) {
  await t.call('PUT', '/api/v1/users/me/policy', { headers: { 'x-user-key': userKey }, body: { approvalAbove: { USD: 1 } } });
  const agent = await t.enabledAgent();
  const res = await t.call<{ id: string; status: string }>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agent.key, 'x-user-key': userKey, 'idempotency-key': `sec-${Date.now()}-${Math.random()}` },
    raw: '{"amount":5,"currency":"USD","description":"needs approval"}',
  });
  expect(res.status).toBe(202);
  return { id: res.body.id, agent };
}

const chargeStatus = async (id: string, agentKey: string) =>
  (await t.call<{ status: string }>('GET', `/api/v1/agents/charge/${id}`, { headers: { 'x-agent-key': agentKey } })).body.status;

describe('console sessions', () => {
  it('sets the cookie HttpOnly, SameSite=Lax, Path=/, named `console` over plain http, with 256 random bits', async () => {
    const user = await t.fundedUser();
    const res = await post('/console/login', { accountKey: user.key });
    const [set] = res.headers.getSetCookie();
    expect(set).toMatch(/^console=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax$/);
  });

  it('refuses a signed-out cookie: after Sign out it leads to /console/login', async () => {
    const user = await t.fundedUser();
    const s = await signIn(user.key);
    expect((await get('/console', s.cookie)).status).toBe(200);
    const out = await post('/console/logout', { csrf: s.csrf }, { cookie: s.cookie });
    expect(out.status).toBe(303);
    expect(out.headers.getSetCookie()[0]).toContain('Max-Age=0');
    const again = await get('/console', s.cookie);
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe('/console/login?next=%2Fconsole');
  });

  it('refuses a POST without the CSRF token, or with another session’s, with 403, and the charge stays PENDING', async () => {
    const user = await t.fundedUser({ USD: 50 });
    const other = await t.fundedUser();
    const { id, agent } = await pendingCharge(user.key);
    const s = await signIn(user.key);
    const o = await signIn(other.key);
    expect((await post(`/console/approvals/${id}/approve`, {}, { cookie: s.cookie })).status).toBe(403);
    expect((await post(`/console/approvals/${id}/approve`, { csrf: o.csrf }, { cookie: s.cookie })).status).toBe(403);
    expect((await post(`/console/approvals/${id}/approve`, { csrf: '' }, { cookie: s.cookie })).status).toBe(403);
    expect(await chargeStatus(id, agent.key)).toBe('PENDING');
    expect((await post('/console/logout', {}, { cookie: s.cookie })).status).toBe(403);
    expect((await get('/console', s.cookie)).status).toBe(200);
  });

  it('refuses a POST from a foreign Origin, or with none, with 403, and the charge stays PENDING', async () => {
    const user = await t.fundedUser({ USD: 50 });
    const { id, agent } = await pendingCharge(user.key);
    const s = await signIn(user.key);
    for (const origin of ['https://evil.example', 'null', `${t.base}.evil.example`, null]) {
      const res = await post(`/console/approvals/${id}/decline`, { csrf: s.csrf }, { cookie: s.cookie, origin });
      expect({ origin, status: res.status }).toEqual({ origin, status: 403 });
    }
    expect(await chargeStatus(id, agent.key)).toBe('PENDING');
    // The login form too: no signing a victim in to the attacker's account from another site.
    expect((await post('/console/login', { accountKey: user.key }, { origin: 'https://evil.example' })).status).toBe(403);
    // And the same request from the console's own origin goes through.
    const ok = await post(`/console/approvals/${id}/decline`, { csrf: s.csrf }, { cookie: s.cookie });
    expect(ok.status).toBe(303);
    expect(await chargeStatus(id, agent.key)).toBe('FAILED');
  });

  it('refuses another payer’s charge id in an Approve URL: 404, and their charge stays PENDING', async () => {
    const victim = await t.fundedUser({ USD: 50 });
    const attacker = await t.fundedUser();
    const { id, agent } = await pendingCharge(victim.key);
    const a = await signIn(attacker.key);
    const res = await post(`/console/approvals/${id}/approve`, { csrf: a.csrf }, { cookie: a.cookie });
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('There is no such charge waiting for you.');
    expect(await chargeStatus(id, agent.key)).toBe('PENDING');
    // Nor does the attacker's Approvals page list it.
    expect(await (await get('/console/approvals', a.cookie)).text()).not.toContain(id);
  });

  it('renders the Overview of a payer with charges in at most 3 DynamoDB requests, the session read included', async () => {
    const user = await t.fundedUser({ USD: 50 });
    await pendingCharge(user.key);
    const s = await signIn(user.key);
    resetDynamoRequestCounts();
    const res = await get('/console', s.cookie);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('1 charge waits for your approval');
    const counts = dynamoRequestCounts();
    expect({ counts, total: Object.values(counts).reduce((a, b) => a + b, 0) }).toEqual({ counts, total: 3 });
  });

  it('answers every page with the headers of DESIGN §21', async () => {
    const user = await t.fundedUser();
    const s = await signIn(user.key);
    const pages = [
      '/console',
      '/console/approvals',
      '/console/security',
      '/console/welcome',
      '/console/login',
      '/console/signup',
      '/console/nowhere',
    ];
    for (const path of pages) {
      const res = await get(path, path.startsWith('/console/login') || path === '/console/signup' ? undefined : s.cookie);
      expect({
        path,
        type: res.headers.get('content-type'),
        cache: res.headers.get('cache-control'),
        csp: res.headers.get('content-security-policy'),
        referrer: res.headers.get('referrer-policy'),
        sniff: res.headers.get('x-content-type-options'),
        frame: res.headers.get('x-frame-options'),
      }).toEqual({
        path,
        type: 'text/html; charset=utf-8',
        cache: 'no-store',
        csp: CSP,
        referrer: 'same-origin',
        sniff: 'nosniff',
        frame: 'DENY',
      });
    }
    // The stylesheet and the script: content-hashed names, a year of immutable caching.
    const page = await (await get('/console/login')).text();
    for (const asset of [
      /href="(\/console\/assets\/console\.[0-9a-f]{16}\.css)"/,
      /src="(\/console\/assets\/passkey\.[0-9a-f]{16}\.js)"/,
    ]) {
      const path = asset.exec(page)?.[1] ?? '';
      const res = await get(path);
      expect([path, res.status, res.headers.get('cache-control')]).toEqual([path, 200, 'public, max-age=31536000, immutable']);
    }
  });

  it('ends a session after 30 idle minutes and after 12 hours, whatever the activity', async () => {
    const user = await t.fundedUser();
    const now = Date.now();
    const openedBy = { kind: 'accountKey' as const, keyHash: hashKey(user.key) };
    const session = async () => (await startSession(user.id, new Date(now), { openedBy })).cookieValue;
    const idle = await session();
    expect(await resolveSession(idle, new Date(now + SESSION_IDLE_MS + 1_000))).toBeUndefined();
    expect(await resolveSession(await session(), new Date(now + SESSION_IDLE_MS - 60_000))).toBeDefined();
    const s = { value: await session() };
    // Kept busy, it still ends at 12 hours.
    let at = now;
    while (at + 20 * 60_000 < now + SESSION_ABSOLUTE_MS) {
      at += 20 * 60_000;
      expect(await resolveSession(s.value, new Date(at))).toBeDefined();
    }
    expect(await resolveSession(s.value, new Date(now + SESSION_ABSOLUTE_MS))).toBeUndefined();
  });
});

describe('passkey challenges', () => {
  it('are single use: a second answer to the same challenge is refused, even after a refusal', async () => {
    const json = (path: string, body: unknown) =>
      fetch(`${t.base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: t.base },
        body: JSON.stringify(body),
      });
    const options = await json('/console/signup/options', { name: 'challenge test' });
    expect(options.status).toBe(200);
    const { challenge } = (await options.json()) as { challenge: string };
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge, origin: t.base })).toString('base64url');
    const response = {
      id: 'AAAA',
      rawId: 'AAAA',
      type: 'public-key',
      clientExtensionResults: {},
      response: { clientDataJSON, attestationObject: 'AAAA' },
    };
    const first = await json('/console/signup/verify', { response });
    expect(first.status).toBe(401);
    expect(((await first.json()) as { error: string }).error).toBe('this passkey was not accepted');
    const again = await json('/console/signup/verify', { response });
    expect(again.status).toBe(401);
    expect(((await again.json()) as { error: string }).error).toBe('this passkey request has expired or was already used, try again');
    expect(again.headers.getSetCookie()).toEqual([]);
  });
});
