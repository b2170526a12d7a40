/**
 * Tabs under faults (DESIGN §29): a crash between the last use and the close. The last use commits
 * and its answer is lost (the process dies after DynamoDB took it): the agent's retry under the same
 * key answers it, and the close captures it. The close commits and its answer is lost: closing again
 * answers the closed tab, and the money moved once. The close dies after reading the tab and before
 * its transaction, while another use lands: the next close captures that use too. The ledger audit
 * after each.
 */
import { hashKey } from '../../functions/core/keys';
import { closeTab } from '../../functions/use-cases/tabs/close';
import { useTab } from '../../functions/use-cases/tabs/tabs';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { crash, inject } from './inject';

const t = useTestStack({}, { sweepIntervalMs: 0 });
jest.setTimeout(120_000);
afterEach(async () => {
  await expectLedgerBalanced();
});

type Tab = { id: string; status: string; used: number; error?: string };
type Input = Record<string, unknown>;
let n = 0;
const key = () => `tf-${Date.now()}-${++n}`;
const touches = (prefix: string, pkOf: 'Update' | 'Put') => (input: Input) =>
  ((input.TransactItems as Record<string, { Key?: Input; Item?: Input }>[] | undefined) ?? []).some((i) =>
    String((pkOf === 'Update' ? i.Update?.Key : i.Put?.Item)?.PK ?? '').startsWith(prefix),
  );
const isUse = (input: Input) =>
  ((input.TransactItems as { Put?: { Item?: Input } }[] | undefined) ?? []).some((i) => String(i.Put?.Item?.SK ?? '').startsWith('U#'));

async function openTab(limit = 5) {
  const user = await t.fundedUser({ USD: 10 });
  const agent = await t.enabledAgent();
  const tab = await t.call<Tab>('POST', '/api/v1/agents/tabs', {
    headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': key() },
    body: { currency: 'USD', limit },
  });
  expect(tab.status).toBe(201);
  return { user, agent, tab: tab.body };
}
const me = async (userKey: string) =>
  (await t.call<{ balances: { USD: number }; held: { USD: number } }>('GET', '/api/v1/users/me', { headers: { 'x-user-key': userKey } }))
    .body;

it('the last use is taken and its answer lost: the retry answers it, the close captures it', async () => {
  const { user, agent, tab } = await openTab();
  const ref = { id: agent.id, keyHash: hashKey(agent.key) };
  await useTab({ agent: ref, tabId: tab.id, idempotencyKey: key(), amount: '1', description: '' });
  const last = key();
  const lost = inject({ command: 'TransactWriteItemsCommand', match: isUse, times: 1, error: crash, where: 'after-response' });
  try {
    await expect(useTab({ agent: ref, tabId: tab.id, idempotencyKey: last, amount: '2', description: '' })).rejects.toThrow(
      'injected crash',
    );
  } finally {
    lost.remove();
  }
  const retry = await t.call<{ used: number }>('POST', `/api/v1/agents/tabs/${tab.id}/usage`, {
    headers: { 'x-agent-key': agent.key, 'idempotency-key': last },
    body: { amount: 2 },
  });
  expect([retry.status, retry.headers.get('idempotent-replayed'), retry.body.used]).toEqual([200, 'true', 3]);
  const closed = await t.call<Tab>('POST', `/api/v1/agents/tabs/${tab.id}/close`, { headers: { 'x-agent-key': agent.key } });
  expect(closed.body).toMatchObject({ status: 'CLOSED', used: 3 });
  expect(await me(user.key)).toMatchObject({ balances: { USD: 7 }, held: { USD: 0 } });
});

it('the close commits and its answer is lost: closing again answers the closed tab, money moved once', async () => {
  const { user, agent, tab } = await openTab();
  const ref = { id: agent.id, keyHash: hashKey(agent.key) };
  await useTab({ agent: ref, tabId: tab.id, idempotencyKey: key(), amount: '1.5', description: '' });
  const lost = inject({
    command: 'TransactWriteItemsCommand',
    match: touches('TAB#', 'Update'),
    times: 1,
    error: crash,
    where: 'after-response',
  });
  try {
    await expect(closeTab(tab.id, { agentId: agent.id })).rejects.toThrow('injected crash');
  } finally {
    lost.remove();
  }
  expect(lost.hits()).toBe(1);
  const again = await t.call<Tab>('POST', `/api/v1/agents/tabs/${tab.id}/close`, { headers: { 'x-agent-key': agent.key } });
  expect(again.body).toMatchObject({ status: 'CLOSED', used: 1.5 });
  expect(await me(user.key)).toMatchObject({ balances: { USD: 8.5 }, held: { USD: 0 } });
});

it('the close dies before its transaction while a use lands: the next close captures that use too', async () => {
  const { user, agent, tab } = await openTab();
  const ref = { id: agent.id, keyHash: hashKey(agent.key) };
  await useTab({ agent: ref, tabId: tab.id, idempotencyKey: key(), amount: '1', description: '' });
  const dies = inject({ command: 'TransactWriteItemsCommand', match: touches('PENDINGCHARGE#', 'Update'), times: 1, error: crash });
  try {
    await expect(closeTab(tab.id, { agentId: agent.id })).rejects.toThrow('injected crash');
  } finally {
    dies.remove();
  }
  const late = await t.call<{ used: number }>('POST', `/api/v1/agents/tabs/${tab.id}/usage`, {
    headers: { 'x-agent-key': agent.key, 'idempotency-key': key() },
    body: { amount: 0.5 },
  });
  expect([late.status, late.body.used]).toEqual([200, 1.5]);
  const closed = await t.call<Tab>('POST', `/api/v1/users/me/tabs/${tab.id}/close`, { headers: { 'x-user-key': user.key } });
  expect(closed.body).toMatchObject({ status: 'CLOSED', used: 1.5 });
  expect(await me(user.key)).toMatchObject({ balances: { USD: 8.5 }, held: { USD: 0 } });
});
