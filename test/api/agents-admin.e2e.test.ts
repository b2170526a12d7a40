import { setAgentEnabled } from '../../functions/store/identity/agent.repository';
import { clearAuthCache } from '../../functions/use-cases/auth';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack();

type Registered = { message: string; apiKey: string; enabled: boolean; agentId: string };
const register = (body: unknown) => t.call<Registered>('POST', '/api/v1/agents/register', { body });

describe('POST /api/v1/agents/register', () => {
  it('registers a disabled agent and returns its key once', async () => {
    const res = await register({ name: 'Weather Bot', email: 'dev@example.com', website: 'https://example.com/docs' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      message: expect.stringContaining('operator'),
      apiKey: expect.stringMatching(/^ag_live_[1-9A-HJ-NP-Za-km-z]{43,44}$/),
      enabled: false,
      agentId: expect.stringMatching(/^a[0-9a-z]{26}$/),
    });
    const charge = await t.call('GET', '/api/v1/agents/charges', { headers: { 'x-agent-key': res.body.apiKey } });
    expect(charge.status).toBe(401);
    expect(charge.body).toEqual({ error: 'invalid or disabled agent key' });
  });

  it('keeps names unique case-insensitively', async () => {
    expect((await register({ name: 'Unique-Name', email: 'a@example.com', website: 'https://a.example.com' })).status).toBe(201);
    const dup = await register({ name: 'unique-name', email: 'b@example.com', website: 'https://b.example.com' });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ error: 'agent name already taken' });
  });

  it('refuses a name that looks like a registered one (another script, fullwidth, 1 for l) with 409', async () => {
    expect((await register({ name: 'paypal-helper', email: 'a@example.com', website: 'https://a.example.com' })).status).toBe(201);
    for (const name of ['pаypal-helper', 'ｐａｙｐａｌ-helper', 'paypa1-helper', 'paypal\u2010helper']) {
      const dup = await register({ name, email: 'b@example.com', website: 'https://b.example.com' });
      expect({ name, status: dup.status, body: dup.body }).toEqual({ name, status: 409, body: { error: 'agent name already taken' } });
    }
  });

  it('stores the NFKC form of a name, the form its uniqueness was checked in', async () => {
    const res = await register({ name: 'ｓｔｏｒｍ-ｂｏｔ', email: 'a@example.com', website: 'https://a.example.com' });
    expect(res.status).toBe(201);
    const agent = await t.call<{ name: string }>('PATCH', `/api/v1/admin/agents/${res.body.agentId}`, {
      headers: t.admin,
      body: { enabled: false },
    });
    expect(agent.body.name).toBe('storm-bot');
  });

  it.each([
    ['a zero-width space', 'ghost\u200bbot-a'],
    ['a right-to-left override', 'ghost\u202ebot-b'],
    ['a control character', 'ghost\u0007bot-c'],
  ])('refuses a name with %s, registering nothing', async (_, name) => {
    const res = await register({ name, email: 'a@example.com', website: 'https://a.example.com' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'name must not contain invisible or control characters' });
    // Nothing was reserved: the visible name is still free.
    expect(
      (await register({ name: name.replace(/[\u200b\u202e\u0007]/u, ''), email: 'a@example.com', website: 'https://a.example.com' }))
        .status,
    ).toBe(201);
  });

  it.each([
    [{ email: 'a@b.co', website: 'https://a.co' }, 'name is required'],
    [{ name: 'n1', website: 'https://a.co' }, 'email is required'],
    [{ name: 'n2', email: 'a@b.co' }, 'website is required'],
    [{ name: 'n3', email: 'not-an-email', website: 'https://a.co' }, 'email must be a valid email address'],
    [{ name: 'n4', email: 'a@b.co', website: 'not a url' }, 'website must be a valid http(s) URL'],
    [{ name: 42, email: 'a@b.co', website: 'https://a.co' }, 'name must be a string'],
    [{ name: 'n5', email: 'a@b.co', website: 'https://a.co', enabled: true }, 'unknown field: enabled'],
  ])('refuses %j with 400 %s', async (body, error) => {
    const res = await register(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error });
  });

  it('refuses a body that is not JSON', async () => {
    const res = await t.call('POST', '/api/v1/agents/register', { raw: '{"name":' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid json body' });
  });

  it.each([
    'application/x-www-form-urlencoded',
    'text/plain;charset=UTF-8',
    'multipart/form-data; boundary=x',
    'application/jsonp',
  ])('refuses a body declared as %s with 415, registering nothing', async (type) => {
    const body = JSON.stringify({ name: `typed-${type.length}`, email: 'a@example.com', website: 'https://a.example.com' });
    const res = await t.call('POST', '/api/v1/agents/register', { raw: body, headers: { 'content-type': type } });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ error: 'content-type must be application/json' });
    expect((await register(JSON.parse(body))).status).toBe(201);
  });

  it.each(['application/json; charset=utf-8', 'Application/JSON'])('accepts a body declared as %s', async (type) => {
    const body = JSON.stringify({ name: `json-${type.length}`, email: 'a@example.com', website: 'https://a.example.com' });
    expect((await t.call('POST', '/api/v1/agents/register', { raw: body, headers: { 'content-type': type } })).status).toBe(201);
  });
});

describe('enabling and disabling agents', () => {
  it('takes effect at once in the container that flips it, and within the cache time elsewhere', async () => {
    const reg = await register({ name: `toggle-${Date.now()}`, email: 'a@b.co', website: 'https://a.co' });
    const h = { 'x-agent-key': reg.body.apiKey };
    expect((await t.call('GET', '/api/v1/agents/balance', { headers: h })).status).toBe(401);
    const patched = await t.call('PATCH', `/api/v1/admin/agents/${reg.body.agentId}`, { headers: t.admin, body: { enabled: true } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: reg.body.agentId, enabled: true, email: 'a@b.co' });
    expect((await t.call('GET', '/api/v1/agents/balance', { headers: h })).status).toBe(200);

    // An operator flips the item in the console: other containers keep their cached answer
    // until it expires (≤ 30 s); here the cache is dropped to stand for that expiry.
    await setAgentEnabled(reg.body.agentId, false);
    expect((await t.call('GET', '/api/v1/agents/balance', { headers: h })).status).toBe(200);
    clearAuthCache();
    const disabled = await t.call('GET', '/api/v1/agents/balance', { headers: h });
    expect(disabled.status).toBe(401);
    expect(disabled.body).toEqual({ error: 'invalid or disabled agent key' });
  });

  it('the kill switch: a console flip stops charges and withdrawals at once, even where the cache still says enabled', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 10 });
    const charge = (key: string) =>
      t.call('POST', '/api/v1/agents/charges', {
        headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': key },
        body: { amount: 2, currency: 'USD' },
      });
    expect((await charge('before')).status).toBe(201);
    const h = { 'x-agent-key': agent.key };
    // The operator flips `enabled` on the item; this container's cache still holds "enabled".
    await setAgentEnabled(agent.id, false);
    expect((await t.call('GET', '/api/v1/agents/balance', { headers: h })).status).toBe(200); // reads may follow the cache
    const refused = await charge('after');
    expect([refused.status, refused.body]).toEqual([401, { error: 'invalid or disabled agent key' }]);
    const withdraw = await t.call('POST', '/api/v1/agents/withdraw', {
      headers: { ...h, 'idempotency-key': 'w-after' },
      body: { amount: 1, currency: 'USD', walletAddress: 'agent@example.com' },
    });
    expect([withdraw.status, withdraw.body]).toEqual([401, { error: 'invalid agent' }]);
    // Nothing moved, and the refusal dropped the cached answer: reads see it now too.
    const balances = await t.call<{ balances: unknown }>('GET', `/api/v1/admin/users/${user.id}`, { headers: t.admin });
    expect(balances.body.balances).toEqual({ USD: 8, USDC: 0 });
    expect((await t.call('GET', '/api/v1/agents/balance', { headers: h })).status).toBe(401);
    // Enabled again, it charges again.
    await setAgentEnabled(agent.id, true);
    clearAuthCache();
    expect((await charge('again')).status).toBe(201);
  });

  it("refuses a disabled agent on every agent endpoint with that endpoint's message", async () => {
    const reg = await register({ name: `disabled-${Date.now()}`, email: 'a@b.co', website: 'https://a.co' });
    const user = await t.fundedUser({ USD: 1 });
    const h = { 'x-agent-key': reg.body.apiKey };
    const charge = await t.call('POST', '/api/v1/agents/charges', {
      headers: { ...h, 'x-user-key': user.key, 'idempotency-key': 'x' },
      body: { amount: 1, currency: 'USD' },
    });
    expect(charge.body).toEqual({ error: 'invalid or disabled agent key' });
    expect((await t.call('GET', '/api/v1/agents/charges', { headers: h })).body).toEqual({ error: 'invalid or disabled agent key' });
    expect((await t.call('GET', '/api/v1/agents/charge/c01aaaaaaaaaaaaaaaaaaaaaaaa', { headers: h })).body).toEqual({
      error: 'invalid agent key',
    });
    for (const res of [charge]) expect(res.status).toBe(401);
  });

  it.each([
    [{ enabled: 'true' }, 400, 'enabled must be a boolean'],
    [{}, 400, 'enabled is required'],
  ])('PATCH %j → %i', async (body, status, error) => {
    const reg = await register({ name: `patch-${Math.random()}`, email: 'a@b.co', website: 'https://a.co' });
    const res = await t.call('PATCH', `/api/v1/admin/agents/${reg.body.agentId}`, { headers: t.admin, body });
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ error });
  });

  it('PATCH of an unknown agent → 404 agent not found', async () => {
    const res = await t.call('PATCH', '/api/v1/admin/agents/a01aaaaaaaaaaaaaaaaaaaaaaaa', { headers: t.admin, body: { enabled: true } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'agent not found' });
  });
});

describe('admin users and credits', () => {
  it('creates users, credits them idempotently, and reads balances', async () => {
    const created = await t.call<{ id: string; userKey: string }>('POST', '/api/v1/admin/users', { headers: t.admin });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.stringMatching(/^u[0-9a-z]{26}$/), userKey: expect.stringMatching(/^uk_live_/) });
    const credit = (key: string, raw: string) =>
      t.call('POST', `/api/v1/admin/users/${created.body.id}/credits`, { headers: { ...t.admin, 'idempotency-key': key }, raw });
    const first = await credit('top-1', '{"amount":25.50,"currency":"USD"}');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ id: created.body.id, balances: { USD: 25.5, USDC: 0 } });
    const replay = await credit('top-1', '{"amount":25.5,"currency":"USD"}');
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect((await credit('top-1', '{"amount":1,"currency":"USD"}')).status).toBe(422);
    expect((await credit('top-2', '{"amount":0.123456,"currency":"USDC"}')).body).toEqual({
      id: created.body.id,
      balances: { USD: 25.5, USDC: 0.123456 },
    });
    expect((await credit('top-3', '{"amount":0.001,"currency":"USD"}')).body).toEqual({
      error: 'amount has more than 2 decimal places for USD',
    });
    const read = await t.call('GET', `/api/v1/admin/users/${created.body.id}`, { headers: t.admin });
    expect(read.body).toEqual({ id: created.body.id, balances: { USD: 25.5, USDC: 0.123456 } });
  });

  it('concurrent credits with different keys all land exactly', async () => {
    const user = await t.fundedUser();
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t.call('POST', `/api/v1/admin/users/${user.id}/credits`, {
          headers: { ...t.admin, 'idempotency-key': `par-${i}` },
          body: { amount: 1.01, currency: 'USD' },
        }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(200));
    const read = await t.call('GET', `/api/v1/admin/users/${user.id}`, { headers: t.admin });
    expect(read.body).toEqual({ id: user.id, balances: { USD: 10.1, USDC: 0 } });
  });

  it('404 for unknown users, 400 without Idempotency-Key', async () => {
    expect((await t.call('GET', '/api/v1/admin/users/u01aaaaaaaaaaaaaaaaaaaaaaaa', { headers: t.admin })).body).toEqual({
      error: 'user not found',
    });
    const credit = await t.call('POST', '/api/v1/admin/users/u01aaaaaaaaaaaaaaaaaaaaaaaa/credits', {
      headers: { ...t.admin, 'idempotency-key': 'x' },
      body: { amount: 1, currency: 'USD' },
    });
    expect(credit.status).toBe(404);
    const user = await t.fundedUser();
    const noKey = await t.call('POST', `/api/v1/admin/users/${user.id}/credits`, {
      headers: t.admin,
      body: { amount: 1, currency: 'USD' },
    });
    expect(noKey.body).toEqual({ error: 'missing Idempotency-key' });
  });

  it.each([
    ['POST', '/api/v1/admin/users'],
    ['GET', '/api/v1/admin/users/u01aaaaaaaaaaaaaaaaaaaaaaaa'],
    ['POST', '/api/v1/admin/users/u01aaaaaaaaaaaaaaaaaaaaaaaa/credits'],
    ['PATCH', '/api/v1/admin/agents/a01aaaaaaaaaaaaaaaaaaaaaaaa'],
    ['GET', '/api/v1/admin/agents/a01aaaaaaaaaaaaaaaaaaaaaaaa'],
    ['GET', '/api/v1/admin/charges/c01aaaaaaaaaaaaaaaaaaaaaaaa'],
  ])('%s %s refuses a wrong or missing admin key with 401', async (method, path) => {
    const variants: [Record<string, string>, string][] = [
      [{}, 'missing x-admin-key header'],
      [{ 'x-admin-key': '' }, 'missing x-admin-key header'],
      [{ 'x-api-key': t.stack.adminKey }, 'missing x-admin-key header'],
      [{ 'x-admin-key': 'wrong-key-but-long-enough' }, 'invalid admin key'],
      [{ 'x-admin-key': `${t.stack.adminKey}x` }, 'invalid admin key'],
    ];
    for (const [headers, error] of variants) {
      const res = await t.call(method, path, {
        headers: { ...headers, 'idempotency-key': 'k' },
        ...(method === 'GET' ? {} : { body: { amount: 1, currency: 'USD' } }),
      });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error });
      expect(res.text).not.toContain(t.stack.adminKey);
    }
  });
});

describe('admin reads of any agent and any charge', () => {
  it("reads an agent with what it has earned, and any agent's charge; 404 for unknown ids", async () => {
    const agent = await t.earningAgent({ USD: '2.5' });
    const shown = await t.call('GET', `/api/v1/admin/agents/${agent.id}`, { headers: t.admin });
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ id: agent.id, enabled: true, balances: { USD: 2.5, USDC: 0 } });

    const charges = await t.call<{ data: { id: string }[] }>('GET', '/api/v1/agents/charges', { headers: { 'x-agent-key': agent.key } });
    const chargeId = charges.body.data[0]?.id ?? '';
    const byAdmin = await t.call('GET', `/api/v1/admin/charges/${chargeId}`, { headers: t.admin });
    const byAgent = await t.call('GET', `/api/v1/agents/charge/${chargeId}`, { headers: { 'x-agent-key': agent.key } });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.text).toBe(byAgent.text);
    // The spec route still takes the admin key where the stage does (npm start).
    expect((await t.call('GET', `/api/v1/agents/charge/${chargeId}`, { headers: t.admin })).text).toBe(byAgent.text);

    expect((await t.call('GET', '/api/v1/admin/agents/a01aaaaaaaaaaaaaaaaaaaaaaaa', { headers: t.admin })).body).toEqual({
      error: 'agent not found',
    });
    expect((await t.call('GET', '/api/v1/admin/charges/c01aaaaaaaaaaaaaaaaaaaaaaaa', { headers: t.admin })).body).toEqual({
      error: 'charge not found',
    });
  });
});

describe('service edges', () => {
  it('GET /health is 200 when the table answers', async () => {
    const res = await t.call('GET', '/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('GET / is a page for people (DESIGN §24), not the JSON 404: test/browser/home-page.e2e.test.ts', async () => {
    const res = await t.call('GET', '/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it.each([
    ['POST', '/'],
    ['GET', '/index.html'],
    ['GET', '/api/v1/agents'],
    ['DELETE', '/api/v1/agents/charges'],
    ['PUT', '/api/v1/agents/register'],
    ['GET', '/api/v1/agents/charge/'],
    ['GET', '/api/v2/agents/charges'],
  ])('%s %s → 404 not found as JSON', async (method, path) => {
    const res = await t.call(method, path);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.body).toEqual({ error: 'not found' });
  });

  it('garbage in headers, bodies and query strings gets a 4xx JSON error, never a 5xx', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 3 });
    const junk = [
      '',
      ' ',
      '\t',
      'null',
      '{}',
      '[]',
      '"',
      '💸',
      'ag_live_',
      'uk_live_',
      `ag_live_${'a'.repeat(500)}`,
      '%00',
      'a'.repeat(4000),
    ];
    const bodies = [
      '',
      'null',
      'true',
      '1',
      '"x"',
      '[]',
      '{',
      '{"amount":}',
      '{"amount":1e}',
      '{"amount":1,"currency":null}',
      '{"amount":{"$gt":0}}',
      '\u0000',
      'x'.repeat(20_000),
    ];
    let calls = 0;
    for (const value of junk) {
      for (const header of ['x-agent-key', 'x-user-key', 'idempotency-key', 'x-admin-key']) {
        const headers: Record<string, string> = {
          'x-agent-key': agent.key,
          'x-user-key': user.key,
          'idempotency-key': `j-${calls}`,
          [header]: value,
        };
        let res: Awaited<ReturnType<typeof t.call<{ error?: unknown }>>>;
        try {
          res = await t.call<{ error?: unknown }>('POST', '/api/v1/agents/charges', { headers, raw: '{"amount":1,"currency":"BTC"}' });
        } catch {
          continue; // fetch itself refuses some header values; nothing reached the server
        }
        calls++;
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        expect(typeof res.body.error).toBe('string');
      }
    }
    for (const raw of bodies) {
      for (const path of [
        '/api/v1/agents/charges',
        '/api/v1/agents/register',
        `/api/v1/admin/users/${user.id}/credits`,
        '/api/v1/agents/charges?page=1',
      ]) {
        const res = await t.call('POST', path, {
          headers: { ...t.admin, 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `b-${calls++}` },
          raw,
        });
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        expect(typeof res.body.error).toBe('string');
      }
    }
    for (const query of [
      'page=%ZZ',
      'limit=1e2',
      'page=1&page=2',
      'limit=99999999999999999999',
      `cursor=${'x'.repeat(600)}`,
      'page=٣',
      '%00=1',
    ]) {
      const res = await t.call('GET', `/api/v1/agents/charges?${query}`, { headers: { 'x-agent-key': agent.key } });
      expect(res.status).toBe(400);
      expect(typeof res.body.error).toBe('string');
    }
    // Nothing moved.
    const read = await t.call('GET', `/api/v1/admin/users/${user.id}`, { headers: t.admin });
    expect(read.body).toEqual({ id: user.id, balances: { USD: 3, USDC: 0 } });
    const balance = await t.call('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': agent.key } });
    expect(balance.body).toEqual({ balances: { USD: 0, USDC: 0 } });
  });
});

// Every end-to-end suite ends by proving the ledger invariant over its table.
auditAfterAll();
