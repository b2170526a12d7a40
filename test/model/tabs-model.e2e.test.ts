/**
 * Model-based steps of tabs (DESIGN §29) over HTTP against the local stack: seeded random sequences
 * of opens, uses (new keys, replays of the same body, the same key with another body, amounts past
 * the limit), closes by the agent and the payer, expiry by the sweeper, and the end of what opened a
 * tab — a grant revoked, the account key rotated (docs/tabs.md "Rotation and revocation") — run against the service
 * and against a small in-memory model. After every step each tab's status, used and usageCount, the
 * payer's balance and held money and the agent's earnings agree with the model, and the ledger audit
 * holds. Kept to a few dozen steps per seed: seconds, not minutes.
 */
import { expireDueCharges } from '../../functions/use-cases/charges/expiry';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack({}, { sweepIntervalMs: 0 });
jest.setTimeout(240_000);

/** A small seeded generator (mulberry32): the same seed, the same steps. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let r = Math.imul(a ^ (a >>> 15), 1 | a);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

type ModelTab = {
  id: string;
  limit: number;
  used: number;
  count: number;
  status: 'OPEN' | 'CLOSED';
  expiresAt: string;
  uses: Map<string, number>;
  /** What opened it: the account key, or a grant (its id). */
  via: string;
};
type Tab = { id: string; status: string; used: number; usageCount: number; expiresAt: string; error?: string };

const cents = (n: number) => Math.round(n * 100);

for (const seed of [7, 43]) {
  it(`tabs against a model (seed ${seed})`, async () => {
    const next = random(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
    const user = await t.fundedUser({ USD: 100 });
    const agent = await t.enabledAgent();
    const model = { balance: 10_000, held: 0, earned: 0, tabs: [] as ModelTab[], grants: [] as { id: string; key: string }[] };
    let keyN = 0;
    const newKey = () => `m${seed}-${Date.now()}-${++keyN}`;
    const newGrant = async () => {
      const res = await t.call<{ id: string; key: string }>('POST', '/api/v1/users/me/grants', {
        headers: { 'x-user-key': user.key },
        body: { agentId: agent.id, currency: 'USD' },
      });
      expect(res.status).toBe(201);
      model.grants.push({ id: res.body.id, key: res.body.key });
    };
    await newGrant();

    const check = async () => {
      const me = (
        await t.call<{ balances: { USD: number }; held: { USD: number } }>('GET', '/api/v1/users/me', {
          headers: { 'x-user-key': user.key },
        })
      ).body;
      expect([cents(me.balances.USD), cents(me.held.USD)]).toEqual([model.balance, model.held]);
      const earned = (
        await t.call<{ balances: { USD: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': agent.key } })
      ).body.balances.USD;
      expect(cents(earned)).toBe(model.earned);
      for (const tab of model.tabs) {
        const read = (await t.call<Tab>('GET', `/api/v1/agents/tabs/${tab.id}`, { headers: { 'x-agent-key': agent.key } })).body;
        expect([read.status, cents(read.used), read.usageCount]).toEqual([tab.status, tab.used, tab.count]);
      }
      await expectLedgerBalanced();
    };
    const closeInModel = (tab: ModelTab) => {
      tab.status = 'CLOSED';
      model.held -= tab.limit;
      model.balance += tab.limit - tab.used;
      model.earned += tab.used;
    };

    for (let step = 0; step < 24; step++) {
      const open = model.tabs.filter((x) => x.status === 'OPEN');
      const action =
        open.length === 0
          ? 'open'
          : pick(['open', 'use', 'use', 'use', 'replay', 'other-body', 'close', 'payer-close', 'expire', 'revoke', 'rotate'] as const);
      if (action === 'open') {
        const limit = pick([100, 250, 500]);
        const ttl = pick([60, 3600]);
        const grant = model.grants.length > 0 && next() < 0.5 ? pick(model.grants) : undefined;
        const res = await t.call<Tab>('POST', '/api/v1/agents/tabs', {
          headers: { 'x-agent-key': agent.key, 'x-user-key': grant?.key ?? user.key, 'idempotency-key': newKey() },
          body: { currency: 'USD', limit: limit / 100, ttlSeconds: ttl },
        });
        const fits = model.balance >= limit;
        expect(res.status).toBe(fits ? 201 : 402);
        if (fits) {
          model.balance -= limit;
          model.held += limit;
          model.tabs.push({
            id: res.body.id,
            limit,
            used: 0,
            count: 0,
            status: 'OPEN',
            expiresAt: res.body.expiresAt,
            uses: new Map(),
            via: grant?.id ?? 'account',
          });
        }
      } else if (action === 'use' || action === 'replay' || action === 'other-body') {
        const tab = pick(model.tabs);
        const prior = [...tab.uses.entries()];
        const [key, amount] =
          action !== 'use' && prior.length > 0
            ? pick(prior)
            : [newKey(), pick([1, 7, 25, 60, tab.limit - tab.used, tab.limit - tab.used + 1])];
        const body = action === 'other-body' && tab.uses.has(key) ? amount + 1 : amount;
        if (body <= 0) continue;
        const res = await t.call<{ used: number; error?: string }>('POST', `/api/v1/agents/tabs/${tab.id}/usage`, {
          headers: { 'x-agent-key': agent.key, 'idempotency-key': key },
          body: { amount: body / 100 },
        });
        if (tab.uses.has(key)) {
          expect(res.status).toBe(body === tab.uses.get(key) ? 200 : 422);
        } else if (tab.status !== 'OPEN') {
          expect([res.status, res.body.error]).toEqual([409, 'tab is not open']);
        } else if (tab.used + body > tab.limit) {
          expect([res.status, res.body.error]).toEqual([409, 'tab limit exceeded']);
        } else {
          expect([res.status, cents(res.body.used)]).toEqual([200, tab.used + body]);
          tab.used += body;
          tab.count += 1;
          tab.uses.set(key, body);
        }
      } else if (action === 'close' || action === 'payer-close') {
        const tab = pick(model.tabs);
        const res =
          action === 'close'
            ? await t.call<Tab>('POST', `/api/v1/agents/tabs/${tab.id}/close`, { headers: { 'x-agent-key': agent.key } })
            : await t.call<Tab>('POST', `/api/v1/users/me/tabs/${tab.id}/close`, { headers: { 'x-user-key': user.key } });
        expect([res.status, res.body.status]).toEqual([200, 'CLOSED']);
        if (tab.status === 'OPEN') closeInModel(tab);
      } else if (action === 'revoke') {
        // The grant's open tabs close at what they used; it opens no more.
        const grant = model.grants.length > 0 ? pick(model.grants) : undefined;
        if (!grant) continue;
        const res = await t.call('DELETE', `/api/v1/users/me/grants/${grant.id}`, { headers: { 'x-user-key': user.key } });
        expect(res.status).toBe(200);
        for (const tab of open) if (tab.via === grant.id) closeInModel(tab);
        model.grants = model.grants.filter((g) => g !== grant);
      } else if (action === 'rotate') {
        // Every open tab closes at what it used, every grant is revoked; the payer goes on with the new key and a new grant.
        const res = await t.call<{ userKey: string }>('POST', '/api/v1/users/me/keys/rotate', { headers: { 'x-user-key': user.key } });
        expect(res.status).toBe(200);
        user.key = res.body.userKey;
        for (const tab of open) closeInModel(tab);
        model.grants = [];
        await newGrant();
      } else {
        // The sweeper, as if an hour and a minute had passed: every open tab closes at what it used.
        const report = await expireDueCharges(new Date(Date.now() + 3_660_000));
        expect(report.failed).toBe(0);
        for (const tab of open) closeInModel(tab);
      }
      await check();
    }
  });
}
