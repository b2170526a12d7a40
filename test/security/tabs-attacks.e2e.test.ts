/**
 * Attacks on tabs (DESIGN §29, docs/tabs.md), over HTTP against the local stack, the ledger audit
 * after each: another agent's tab (read, use, list, close: 404, nothing moves), a replay with
 * another body (422, nothing moves), negative, zero, over-precise and malformed amounts (400, never
 * rounded), uses after the close, a payer closing another payer's tab, and the switches: a disabled
 * or blocked agent's tab closes at what it used before, and its uses are refused after.
 */
import { expectLedgerBalanced } from '../support/audit';
import { eventually } from '../support/eventually';
import { useTestStack } from '../support/stack';

const t = useTestStack({}, { sweepIntervalMs: 0 });
jest.setTimeout(120_000);
afterEach(async () => {
  await expectLedgerBalanced();
});

type Tab = { id: string; status: string; used: number; closedBy: string | null; error?: string };
let n = 0;
const key = () => `atk-${Date.now()}-${++n}`;
const open = (agentKey: string, userKey: string, limit = 5) =>
  t.call<Tab>('POST', '/api/v1/agents/tabs', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': key() },
    body: { currency: 'USD', limit },
  });
const use = (agentKey: string, tabId: string, body: unknown, idem = key()) =>
  t.call<{ used?: number; error?: string }>('POST', `/api/v1/agents/tabs/${tabId}/usage`, {
    headers: { 'x-agent-key': agentKey, 'idempotency-key': idem },
    body,
  });
const tabOf = async (agentKey: string, tabId: string) =>
  (await t.call<Tab>('GET', `/api/v1/agents/tabs/${tabId}`, { headers: { 'x-agent-key': agentKey } })).body;

it("another agent's tab is not found, whatever it asks, and nothing moves", async () => {
  const user = await t.fundedUser({ USD: 10 });
  const owner = await t.enabledAgent();
  const thief = await t.enabledAgent();
  const tab = (await open(owner.key, user.key)).body;
  const h = { 'x-agent-key': thief.key };
  const answers = await Promise.all([
    t.call<Tab>('GET', `/api/v1/agents/tabs/${tab.id}`, { headers: h }),
    t.call<Tab>('GET', `/api/v1/agents/tabs/${tab.id}/usage`, { headers: h }),
    use(thief.key, tab.id, { amount: 1 }),
    t.call<Tab>('POST', `/api/v1/agents/tabs/${tab.id}/close`, { headers: h }),
  ]);
  expect(answers.map((a) => [a.status, a.body.error])).toEqual(Array(4).fill([404, 'tab not found']));
  expect(await tabOf(owner.key, tab.id)).toMatchObject({ status: 'OPEN', used: 0 });
});

it('a replay with another body is 422 and takes nothing; bad amounts are 400, never rounded', async () => {
  const user = await t.fundedUser({ USD: 10 });
  const agent = await t.enabledAgent();
  const tab = (await open(agent.key, user.key)).body;
  expect((await use(agent.key, tab.id, { amount: 1 }, 'same')).status).toBe(200);
  const other = await use(agent.key, tab.id, { amount: 4 }, 'same');
  expect([other.status, other.body.error]).toEqual([422, 'idempotency key reused with different request']);
  for (const raw of ['{"amount":-1}', '{"amount":0}', '{"amount":0.001}', '{"amount":"1"}', '{"amount":1e-9}', '{}']) {
    const bad = await t.call<{ error: string }>('POST', `/api/v1/agents/tabs/${tab.id}/usage`, {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': key() },
      raw,
    });
    expect([raw, bad.status]).toEqual([raw, 400]);
  }
  expect(await tabOf(agent.key, tab.id)).toMatchObject({ used: 1 });
});

it('uses after the close are refused; a payer cannot close another payer’s tab', async () => {
  const payer = await t.fundedUser({ USD: 10 });
  const stranger = await t.fundedUser({ USD: 10 });
  const agent = await t.enabledAgent();
  const tab = (await open(agent.key, payer.key)).body;
  const foreign = await t.call<Tab>('POST', `/api/v1/users/me/tabs/${tab.id}/close`, { headers: { 'x-user-key': stranger.key } });
  expect([foreign.status, foreign.body.error]).toEqual([404, 'tab not found']);
  await use(agent.key, tab.id, { amount: 2 });
  const closed = await t.call<Tab>('POST', `/api/v1/users/me/tabs/${tab.id}/close`, { headers: { 'x-user-key': payer.key } });
  expect(closed.body).toMatchObject({ status: 'CLOSED', used: 2 });
  const late = await use(agent.key, tab.id, { amount: 0.5 });
  expect([late.status, late.body.error]).toEqual([409, 'tab is not open']);
  expect(await tabOf(agent.key, tab.id)).toMatchObject({ used: 2 });
});

it("a disabled agent's tab closes at what it used before the switch", async () => {
  const user = await t.fundedUser({ USD: 10 });
  const agent = await t.enabledAgent();
  const tab = (await open(agent.key, user.key)).body;
  await use(agent.key, tab.id, { amount: 1.5 });
  expect((await t.call('PATCH', `/api/v1/admin/agents/${agent.id}`, { headers: t.admin, body: { enabled: false } })).status).toBe(200);
  const list = async () =>
    (await t.call<{ data: Tab[] }>('GET', '/api/v1/users/me/tabs', { headers: { 'x-user-key': user.key } })).body.data[0];
  const closed = await eventually('the kill switch closes the tab', async () => {
    const now = await list();
    return now?.status === 'CLOSED' ? now : undefined;
  });
  expect(closed).toMatchObject({ used: 1.5, closedBy: 'agent disabled' });
  const me = (
    await t.call<{ balances: { USD: number }; held: { USD: number } }>('GET', '/api/v1/users/me', { headers: { 'x-user-key': user.key } })
  ).body;
  expect(me).toMatchObject({ balances: { USD: 8.5 }, held: { USD: 0 } });
  const late = await use(agent.key, tab.id, { amount: 0.5 });
  expect(late.status).not.toBe(200);
});

it("a blocked agent's tab closes at what it used before the block; its uses are refused", async () => {
  const user = await t.fundedUser({ USD: 10 });
  const agent = await t.enabledAgent();
  const tab = (await open(agent.key, user.key)).body;
  await use(agent.key, tab.id, { amount: 0.75 });
  const put = await t.call('PUT', '/api/v1/users/me/policy', {
    headers: { 'x-user-key': user.key },
    body: { agents: { [agent.id]: { blocked: true } } },
  });
  expect(put.status).toBe(200);
  expect(await tabOf(agent.key, tab.id)).toMatchObject({ status: 'CLOSED', used: 0.75, closedBy: 'agent blocked' });
  const late = await use(agent.key, tab.id, { amount: 0.5 });
  expect([late.status, late.body.error]).toEqual([409, 'tab is not open']);
});
