/**
 * Attacker: an agent holding a grant that says where it may pay (DESIGN §27 scope), trying to pay
 * somewhere else. It writes the host the payer listed another way (`API.EXAMPLE.COM.`, with a port,
 * with userinfo that puts another host behind it), leans on a wildcard (`evilexample.com` against
 * `*.example.com`), names a listed payee in another encoding, leaves the resource out, charges
 * plainly instead of purchasing, or uses another payer's or agent's grant. A payer who tries to
 * write a scope the check could read two ways (a port, an IP, 21 entries) is refused at creation.
 *
 * Property: a payment outside the scope is 403 `payee not allowed by grant` / `host not allowed by
 * grant`, kept FAILED in the payer's history, nothing held (balance and the grant's `spent`
 * unchanged); inside it, the purchase goes through as any other.
 */
import bs58 from 'bs58';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { type Buyer, usePurchaseFixture } from '../support/x402';

const t = useTestStack();
const x402 = usePurchaseFixture(t);
auditAfterAll();

type Purchase = { id: string; status: string; error?: string };
type Grant = { id: string; key: string; spent: number; scope?: { payees?: string[]; hosts?: string[] }; error?: string };

const OTHER_PAYEE = bs58.encode(new Uint8Array(32).fill(7));

const createGrant = (userKey: string, body: Record<string, unknown>) =>
  t.call<Grant>('POST', '/api/v1/users/me/grants', { headers: { 'x-user-key': userKey }, body: { currency: 'USDC', ...body } });

async function scoped(scope: Record<string, unknown>): Promise<Buyer> {
  return x402.buyer({ grant: { limits: { total: 5 }, scope } });
}

const buyFor = async (b: Buyer, url: string | undefined) =>
  x402.buy<Purchase>(b, await x402.requirements(), url === undefined ? {} : { body: { resource: { url } } });

/** The refusal kept: FAILED with its reason in the payer's history, nothing held, nothing spent. */
async function expectKeptNothingHeld(b: Buyer, reason: string) {
  const history = await t.call<{ data: { status: string; failureReason: string | null; grantId?: string }[] }>(
    'GET',
    '/api/v1/users/me/charges',
    { headers: { 'x-user-key': b.user.key } },
  );
  expect(history.body.data[0]).toMatchObject({ status: 'FAILED', failureReason: reason, grantId: b.grant.id });
  expect(await x402.usdcBalance(b.user.id)).toBe(1);
  const grant = await t.call<Grant>('GET', `/api/v1/users/me/grants/${b.grant.id}`, { headers: { 'x-user-key': b.user.key } });
  expect(grant.body.spent).toBe(0);
}

describe('creating a scope: what the check could read two ways is refused', () => {
  it('normalises hosts (case, trailing dot, IDN) and shows the scope', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USDC: 1 });
    const made = await createGrant(user.key, {
      agentId: agent.id,
      scope: { hosts: ['API.EXAMPLE.COM.', '*.Bücher.example', 'api.example.com'], payees: [OTHER_PAYEE] },
    });
    expect(made.status).toBe(201);
    expect(made.body.scope).toEqual({ hosts: ['api.example.com', '*.xn--bcher-kva.example'], payees: [OTHER_PAYEE] });
    const read = await t.call<Grant>('GET', `/api/v1/users/me/grants/${made.body.id}`, { headers: { 'x-user-key': user.key } });
    expect(read.body.scope).toEqual(made.body.scope);
  });

  it.each([
    ['a port', { hosts: ['api.example.com:8443'] }, 'scope.hosts.0 must not have a port'],
    ['userinfo', { hosts: ['user@api.example.com'] }, 'scope.hosts.0 must not have userinfo (user@)'],
    ['a path', { hosts: ['api.example.com/pay'] }, 'scope.hosts.0 must not have a path, query or fragment'],
    ['a space', { hosts: ['api example.com'] }, 'scope.hosts.0 must not contain spaces'],
    ['an IP', { hosts: ['127.0.0.1'] }, 'scope.hosts.0 must be a host name, not an IP address'],
    [
      'a wildcard over a TLD',
      { hosts: ['*.com'] },
      "scope.hosts.0 may have '*' only as a whole first label over at least two labels (*.example.com)",
    ],
    ['21 hosts', { hosts: Array.from({ length: 21 }, (_, i) => `h${i}.example.com`) }, 'scope.hosts must be at most 20 entries'],
    ['21 payees', { payees: Array.from({ length: 21 }, () => OTHER_PAYEE) }, 'scope.payees must be at most 20 entries'],
    ['an empty list', { hosts: [] }, 'scope.hosts must not be empty'],
    ['an empty scope', {}, 'scope must name payees or hosts'],
    [
      'a payee in hex',
      { payees: [Buffer.from(bs58.decode(OTHER_PAYEE)).toString('hex')] },
      'scope.payees.0 must be a Solana address (base58 of 32 bytes)',
    ],
    ['a payee with a space', { payees: [` ${OTHER_PAYEE}`] }, 'scope.payees.0 must be a Solana address (base58 of 32 bytes)'],
  ])('%s → 400', async (_name, scope, error) => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({});
    const made = await createGrant(user.key, { agentId: agent.id, scope });
    expect([made.status, made.body.error]).toEqual([400, error]);
  });
});

describe('hosts', () => {
  it('a host written another way matches; userinfo putting another host behind it does not', async () => {
    const b = await scoped({ hosts: ['api.example.com'] });
    for (const url of ['https://API.EXAMPLE.COM./weather', 'https://api.example.com:8443/weather', 'https://u:p@api.example.com/w']) {
      const ok = await buyFor(b, url);
      expect([url, ok.status]).toEqual([url, 201]);
    }
    const b2 = await scoped({ hosts: ['api.example.com'] });
    const evil = await buyFor(b2, 'https://api.example.com@evil.com/weather');
    expect([evil.status, evil.body.error]).toEqual([403, 'host not allowed by grant']);
    await expectKeptNothingHeld(b2, 'host not allowed by grant');
  });

  it('a wildcard matches sub-domains only: not evilexample.com, not the apex', async () => {
    const b = await scoped({ hosts: ['*.example.com'] });
    expect((await buyFor(b, 'https://a.b.example.com/weather')).status).toBe(201);
    for (const url of ['https://evilexample.com/weather', 'https://example.com/weather', 'https://example.com.evil.io/']) {
      const refused = await buyFor(b, url);
      expect([url, refused.status, refused.body.error]).toEqual([url, 403, 'host not allowed by grant']);
    }
  });

  it('a purchase without resource under a hosts scope is refused, kept FAILED, nothing held', async () => {
    const b = await scoped({ hosts: ['api.example.com'] });
    const refused = await buyFor(b, undefined);
    expect([refused.status, refused.body.error]).toEqual([403, 'host not allowed by grant']);
    await expectKeptNothingHeld(b, 'host not allowed by grant');
  });
});

describe('payees', () => {
  it("the seller's address listed: allowed; another address listed: 403, kept FAILED, nothing held", async () => {
    const ok = await scoped({ payees: [x402.seller.wallet] });
    expect((await buyFor(ok, undefined)).status).toBe(201);
    const b = await scoped({ payees: [OTHER_PAYEE] });
    const refused = await buyFor(b, undefined);
    expect([refused.status, refused.body.error]).toEqual([403, 'payee not allowed by grant']);
    await expectKeptNothingHeld(b, 'payee not allowed by grant');
  });

  it('a listed payee given in another encoding never pays it (hex is not an address; another case is another key)', async () => {
    const b = await scoped({ payees: [x402.seller.wallet] });
    const hex = Buffer.from(bs58.decode(x402.seller.wallet)).toString('hex');
    const asHex = await x402.buy<Purchase>(b, { ...(await x402.requirements()), payTo: hex });
    expect(asHex.status).toBe(400);
    const flipped = [...x402.seller.wallet].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
    const other = await x402.buy<Purchase>(b, { ...(await x402.requirements()), payTo: flipped });
    // Either not an address at all, or another key: never the listed one.
    expect([400, 403]).toContain(other.status);
    expect(await x402.usdcBalance(b.user.id)).toBe(1);
  });
});

describe('around the scope', () => {
  it('a plain charge with a scoped grant is refused (it pays the agent, which the scope does not name), kept FAILED', async () => {
    const b = await scoped({ payees: [x402.seller.wallet] });
    const charge = await t.call<{ error?: string }>('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': b.agent.key, 'x-user-key': b.grant.key, 'idempotency-key': `plain-${b.grant.id}` },
      body: { amount: 0.01, currency: 'USDC', description: 'plain' },
    });
    expect([charge.status, charge.body.error]).toEqual([403, 'payee not allowed by grant']);
    await expectKeptNothingHeld(b, 'payee not allowed by grant');
  });

  it("another agent's scoped grant key: 403 grant is for another agent; another payer cannot read the grant", async () => {
    const b = await scoped({ hosts: ['api.example.com'] });
    const thief = await t.enabledAgent();
    const stolen = await x402.buy<Purchase>({ agent: thief, grant: b.grant }, await x402.requirements(), {
      body: { resource: { url: 'https://api.example.com/weather' } },
    });
    expect([stolen.status, stolen.body.error]).toEqual([403, 'grant is for another agent']);
    const stranger = await t.fundedUser({});
    const read = await t.call<Grant>('GET', `/api/v1/users/me/grants/${b.grant.id}`, { headers: { 'x-user-key': stranger.key } });
    expect(read.status).toBe(404);
  });

  it('a revoked scoped grant is 401 before the scope speaks, and nothing is kept', async () => {
    const b = await scoped({ hosts: ['api.example.com'] });
    await t.call('DELETE', `/api/v1/users/me/grants/${b.grant.id}`, { headers: { 'x-user-key': b.user.key } });
    const refused = await buyFor(b, 'https://evil.com/');
    expect([refused.status, refused.body.error]).toEqual([401, 'invalid user key']);
    const history = await t.call<{ data: unknown[] }>('GET', '/api/v1/users/me/charges', { headers: { 'x-user-key': b.user.key } });
    expect(history.body.data).toEqual([]);
  });

  it('an agent asks for a scope; the payer sees it on the consent page before allowing', async () => {
    const agent = await t.enabledAgent();
    const asked = await t.call<{ consentUrl: string }>('POST', '/api/v1/agents/grant-requests', {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': `scope-req-${agent.id}` },
      body: { currency: 'USDC', limits: { total: 1 }, scope: { hosts: ['*.Weather.example'], payees: [OTHER_PAYEE] } },
    });
    expect(asked.status).toBe(201);
    const page = await fetch(asked.body.consentUrl);
    const text = await page.text();
    expect(text).toContain('*.weather.example');
    expect(text).toContain(OTHER_PAYEE);
    const bad = await t.call<{ error: string }>('POST', '/api/v1/agents/grant-requests', {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': `scope-req-bad-${agent.id}` },
      body: { currency: 'USDC', scope: { hosts: ['https://api.example.com@evil.com'] } },
    });
    expect(bad.status).toBe(400);
  });
});
