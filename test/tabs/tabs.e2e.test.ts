/**
 * Tabs end to end (DESIGN §29, docs/tabs.md) over HTTP against one local stack, the ledger audit
 * after each case: open → uses → close moves the payer's money exactly twice (the hold, then the
 * capture of `used` and the release of the rest); replays answer the first use; the limit and the
 * close are never passed by concurrent uses; the payer's approval, the payer's close and the
 * sweeper's close at `expiresAt`.
 */
import { expireDueCharges } from '../../functions/use-cases/charges/expiry';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack({}, { sweepIntervalMs: 0 });
jest.setTimeout(180_000);
afterEach(async () => {
  await expectLedgerBalanced();
});

type Tab = {
  id: string;
  status: string;
  limit: number;
  used: number;
  usageCount: number;
  expiresAt: string;
  chargeId: string;
  closedBy: string | null;
  approvalUrl?: string | null;
  error?: string;
};
type Use = { tabId: string; usageId: string; amount: number; used: number; remaining: number; error?: string };

let n = 0;
const key = () => `tab-${Date.now()}-${++n}`;
const open = (agentKey: string, userKey: string, body: Record<string, unknown>, idem = key()) =>
  t.call<Tab>('POST', '/api/v1/agents/tabs', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': idem },
    body: { currency: 'USD', description: 'tokens', ...body },
  });
const use = (agentKey: string, tabId: string, body: Record<string, unknown>, idem = key()) =>
  t.call<Use>('POST', `/api/v1/agents/tabs/${tabId}/usage`, { headers: { 'x-agent-key': agentKey, 'idempotency-key': idem }, body });
const close = (agentKey: string, tabId: string) =>
  t.call<Tab>('POST', `/api/v1/agents/tabs/${tabId}/close`, { headers: { 'x-agent-key': agentKey } });
const me = async (userKey: string) =>
  (await t.call<{ balances: { USD: number }; held: { USD: number } }>('GET', '/api/v1/users/me', { headers: { 'x-user-key': userKey } }))
    .body;
const earned = async (agentKey: string) =>
  (await t.call<{ balances: { USD: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': agentKey } })).body.balances
    .USD;

it('opens, takes uses, replays them, refuses past the limit, and closes capturing what was used', async () => {
  const user = await t.fundedUser({ USD: 20 });
  const agent = await t.enabledAgent();
  const opened = await open(agent.key, user.key, { limit: 5 });
  expect(opened.status).toBe(201);
  expect(opened.body).toMatchObject({ status: 'OPEN', currency: 'USD', limit: 5, used: 0, usageCount: 0, grantId: null });
  expect(opened.body.id).toMatch(/^t[0-9a-z]{26}a[0-9a-z]{26}$/);
  expect(await me(user.key)).toMatchObject({ balances: { USD: 15 }, held: { USD: 5 } });

  const first = await use(agent.key, opened.body.id, { amount: 1.25, description: '1250 tokens' }, 'use-1');
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ tabId: opened.body.id, amount: 1.25, used: 1.25, remaining: 3.75 });
  expect(first.body.usageId).toMatch(/^tu[0-9a-z]{26}$/);
  const again = await use(agent.key, opened.body.id, { amount: 1.25, description: '1250 tokens' }, 'use-1');
  expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([200, first.text, 'true']);
  const other = await use(agent.key, opened.body.id, { amount: 2 }, 'use-1');
  expect([other.status, other.body.error]).toEqual([422, 'idempotency key reused with different request']);
  const second = await use(agent.key, opened.body.id, { amount: 3.75 });
  expect(second.body).toMatchObject({ used: 5, remaining: 0 });
  const over = await use(agent.key, opened.body.id, { amount: 0.01 });
  expect([over.status, over.body.error]).toEqual([409, 'tab limit exceeded']);

  const read = await t.call<Tab>('GET', `/api/v1/agents/tabs/${opened.body.id}`, { headers: { 'x-agent-key': agent.key } });
  expect(read.body).toMatchObject({ status: 'OPEN', used: 5, usageCount: 2 });
  const uses = await t.call<{ data: Use[]; nextCursor: string | null }>('GET', `/api/v1/agents/tabs/${opened.body.id}/usage?limit=1`, {
    headers: { 'x-agent-key': agent.key },
  });
  expect(uses.body.data).toHaveLength(1);
  expect(uses.body.nextCursor).not.toBeNull();
  const next = `/api/v1/agents/tabs/${opened.body.id}/usage?cursor=${encodeURIComponent(uses.body.nextCursor ?? '')}`;
  const rest = await t.call<{ data: Use[]; nextCursor: string | null }>('GET', next, { headers: { 'x-agent-key': agent.key } });
  expect([...uses.body.data, ...rest.body.data].map((u) => u.amount).sort()).toEqual([1.25, 3.75]);

  const closed = await close(agent.key, opened.body.id);
  expect(closed.status).toBe(200);
  expect(closed.body).toMatchObject({ status: 'CLOSED', used: 5, closedBy: 'agent' });
  expect(await me(user.key)).toMatchObject({ balances: { USD: 15 }, held: { USD: 0 } });
  expect(await earned(agent.key)).toBe(5);
  const charge = await t.call<{ status: string; amount: number }>('GET', `/api/v1/agents/charge/${closed.body.chargeId}`, {
    headers: { 'x-agent-key': agent.key },
  });
  expect(charge.body).toMatchObject({ status: 'SUCCESS', amount: 5, authorizedAmount: 5 });
  const history = await t.call<{ data: { id: string; type?: string; tabId?: string; amount: number }[] }>(
    'GET',
    '/api/v1/users/me/charges',
    {
      headers: { 'x-user-key': user.key },
    },
  );
  expect(history.body.data.find((c) => c.id === closed.body.chargeId)).toMatchObject({ type: 'tab', tabId: opened.body.id, amount: 5 });
  const after = await use(agent.key, opened.body.id, { amount: 0.01 });
  expect([after.status, after.body.error]).toEqual([409, 'tab is not open']);
  const twice = await close(agent.key, opened.body.id);
  expect([twice.status, twice.body.status]).toEqual([200, 'CLOSED']);
});

it('the payer lists its tabs newest first and closes one; the rest of the hold comes back', async () => {
  const user = await t.fundedUser({ USD: 20 });
  const agent = await t.enabledAgent();
  const a = await open(agent.key, user.key, { limit: 2 });
  const b = await open(agent.key, user.key, { limit: 3 });
  await use(agent.key, b.body.id, { amount: 0.5 });
  const list = await t.call<{ data: (Tab & { held: number; agent: { id: string } })[] }>('GET', '/api/v1/users/me/tabs', {
    headers: { 'x-user-key': user.key },
  });
  expect(list.body.data.map((x) => [x.id, x.used, x.held])).toEqual([
    [b.body.id, 0.5, 3],
    [a.body.id, 0, 2],
  ]);
  const closed = await t.call<Tab>('POST', `/api/v1/users/me/tabs/${b.body.id}/close`, { headers: { 'x-user-key': user.key } });
  expect(closed.body).toMatchObject({ status: 'CLOSED', used: 0.5, closedBy: 'payer' });
  expect(await me(user.key)).toMatchObject({ balances: { USD: 17.5 }, held: { USD: 2 } });
  const open_ = await t.call<{ data: Tab[] }>('GET', '/api/v1/users/me/tabs?status=OPEN', { headers: { 'x-user-key': user.key } });
  expect(open_.body.data.map((x) => x.id)).toEqual([a.body.id]);
  // An unused tab closes with all of it released.
  const unused = await close(agent.key, a.body.id);
  expect(unused.body).toMatchObject({ status: 'CLOSED', used: 0 });
  expect(await me(user.key)).toMatchObject({ balances: { USD: 19.5 }, held: { USD: 0 } });
});

it('the sweeper closes a tab at expiresAt at what it used; uses past it are refused', async () => {
  const user = await t.fundedUser({ USD: 10 });
  const agent = await t.enabledAgent();
  const opened = await open(agent.key, user.key, { limit: 4, ttlSeconds: 60 });
  await use(agent.key, opened.body.id, { amount: 1.5 });
  const report = await expireDueCharges(new Date(Date.parse(opened.body.expiresAt) + 1000));
  expect(report.expired).toBe(1);
  const read = await t.call<Tab>('GET', `/api/v1/agents/tabs/${opened.body.id}`, { headers: { 'x-agent-key': agent.key } });
  expect(read.body).toMatchObject({ status: 'CLOSED', used: 1.5, closedBy: 'expiry' });
  expect(await me(user.key)).toMatchObject({ balances: { USD: 8.5 }, held: { USD: 0 } });
  expect(await earned(agent.key)).toBe(1.5);
});

it('above the approval threshold the tab waits for the payer, then opens', async () => {
  const user = await t.fundedUser({ USD: 50 });
  const agent = await t.enabledAgent();
  await t.call('PUT', '/api/v1/users/me/policy', { headers: { 'x-user-key': user.key }, body: { approvalAbove: { USD: 10 } } });
  const opened = await open(agent.key, user.key, { limit: 20 });
  expect([opened.status, opened.body.status]).toEqual([202, 'PENDING_APPROVAL']);
  expect(opened.body.approvalUrl).toMatch(/\/approve\//);
  const early = await use(agent.key, opened.body.id, { amount: 1 });
  expect([early.status, early.body.error]).toEqual([409, 'tab is not open']);
  const approved = await t.call('POST', `/api/v1/users/me/charges/${opened.body.chargeId}/approve`, {
    headers: { 'x-user-key': user.key },
  });
  expect(approved.status).toBe(200);
  const used = await use(agent.key, opened.body.id, { amount: 1 });
  expect([used.status, used.body.used]).toEqual([200, 1]);
  const closed = await close(agent.key, opened.body.id);
  expect(closed.body).toMatchObject({ status: 'CLOSED', used: 1 });
  expect(await me(user.key)).toMatchObject({ balances: { USD: 49 }, held: { USD: 0 } });
});

it('concurrent uses never pass the limit, the uses add up to used, and a racing close captures exactly that', async () => {
  for (let round = 0; round < 3; round++) {
    const user = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const opened = await open(agent.key, user.key, { limit: 1 });
    const answers = await Promise.all([
      ...Array.from({ length: 12 }, () => use(agent.key, opened.body.id, { amount: 0.1 })),
      ...(round === 2 ? [close(agent.key, opened.body.id)] : []),
    ]);
    const accepted = answers.filter((a) => a.status === 200 && 'usageId' in a.body);
    for (const a of answers) expect([200, 409]).toContain(a.status);
    const closed = await close(agent.key, opened.body.id);
    expect(closed.body.status).toBe('CLOSED');
    const total = Math.round(accepted.reduce((sum, a) => sum + (a.body as Use).amount * 100, 0));
    expect(Math.round(closed.body.used * 100)).toBe(total);
    expect(total).toBeLessThanOrEqual(100);
    if (round < 2) expect(total).toBe(100);
    expect(await earned(agent.key)).toBe(total / 100);
    expect((await me(user.key)).balances.USD).toBe(10 - total / 100);
  }
});
