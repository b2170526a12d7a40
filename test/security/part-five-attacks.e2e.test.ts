/**
 * Part five's attacks (DESIGN §27–§29, docs/tabs.md "Rotation and revocation", docs/receipts.md),
 * over HTTP against one local stack, the ledger audit after each case.
 *
 * Tabs: a thief holding the leaked account key (or an agent whose grant is being revoked, or whose
 * payer blocks it) keeps metering its tab while the payer ends the authorisation. A close is
 * conditioned on `used` being what it read, so a use that lands between the close's read and its
 * write sends it round again; a thief that always lands one there (modelled deterministically: a
 * use is committed right before each close's transaction) must not keep the tab open, nor fail
 * the rotation (the leaked key's remedy), the revocation or the block forever. Also: old tab ids
 * after the close, another payer's tab, amounts that would round, and a tab whose TTL lapses
 * before its close.
 *
 * Receipts: `xr` ids of another agent, crafted forms of an `xr` id (suffix, case, URL-encoding,
 * traversal, length), a payer's key on an x402 refund's receipt, and a real receipt altered (kid
 * swapped, payload type swapped) under stock jose.
 */
import { db } from '../../functions/store/client';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack({}, { sweepIntervalMs: 0 });
jest.setTimeout(180_000);
afterEach(async () => {
  await expectLedgerBalanced();
});

type Tab = { id: string; status: string; used: number; limit: number; chargeId: string; closedBy: string | null; error?: string };
type Use = { used: number; amount: number; usageId?: string; error?: string };
type Rotated = { userKey: string };

let n = 0;
const key = () => `p5-${process.pid}-${Date.now()}-${++n}`;
const open = async (agentKey: string, userKey: string, limit = 5, extra: Record<string, unknown> = {}) => {
  const res = await t.call<Tab>('POST', '/api/v1/agents/tabs', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': key() },
    body: { currency: 'USD', limit, ...extra },
  });
  expect(res.status).toBe(201);
  return res.body;
};
const use = (agentKey: string, tabId: string, amount: unknown, idem = key()) =>
  t.call<Use>('POST', `/api/v1/agents/tabs/${tabId}/usage`, {
    headers: { 'x-agent-key': agentKey, 'idempotency-key': idem },
    body: { amount },
  });
const tabOf = async (agentKey: string, tabId: string) =>
  (await t.call<Tab>('GET', `/api/v1/agents/tabs/${tabId}`, { headers: { 'x-agent-key': agentKey } })).body;
const me = async (userKey: string) =>
  (await t.call<{ balances: { USD: number }; held: { USD: number } }>('GET', '/api/v1/users/me', { headers: { 'x-user-key': userKey } }))
    .body;
const earned = async (agentKey: string) =>
  (await t.call<{ balances: { USD: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': agentKey } })).body.balances
    .USD;
const rotate = (userKey: string) => t.call<Rotated>('POST', '/api/v1/users/me/keys/rotate', { headers: { 'x-user-key': userKey } });
const grantFor = async (userKey: string, agentId: string) => {
  const res = await t.call<{ id: string; key: string }>('POST', '/api/v1/users/me/grants', {
    headers: { 'x-user-key': userKey },
    body: { agentId, currency: 'USD', limits: { total: 50 } },
  });
  expect(res.status).toBe(201);
  return res.body;
};
const cents = (amount: number) => Math.round(amount * 100);

type Items = { Update?: { Key?: { PK?: unknown }; UpdateExpression?: string } }[];
/** A close's settlement of tab `tabId`: the transaction that sets its item CLOSED. */
const closesTab = (tabId: string) => (input: Record<string, unknown>) =>
  ((input.TransactItems as Items | undefined) ?? []).some(
    (i) => i.Update?.Key?.PK === `TAB#${tabId}` && String(i.Update?.UpdateExpression).includes('closedBy'),
  );

let thiefSeq = 0;
/**
 * The thief who always wins the race: right before each transaction that would close `tabId`, one
 * more use of it commits (through the service, as the agent would send it). Answers the uses' answers.
 */
function racingThief(agentKey: string, tabId: string, amount = 0.01) {
  const name = `racing-thief-${++thiefSeq}`;
  const answers: number[] = [];
  const stack = db().middlewareStack;
  stack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand' && closesTab(tabId)(args.input as Record<string, unknown>)) {
        answers.push((await use(agentKey, tabId, amount)).status);
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return { answers, stop: () => void stack.remove(name) };
}

describe('a thief racing the end of the payer’s authorisation', () => {
  it('rotation: a use before every close cannot keep the leaked key’s tab open nor the rotation failing', async () => {
    const payer = await t.fundedUser({ USD: 20 });
    const thief = await t.enabledAgent();
    const tab = await open(thief.key, payer.key, 10);
    expect((await use(thief.key, tab.id, 0.5)).status).toBe(200);
    const race = racingThief(thief.key, tab.id);
    let rotated: Awaited<ReturnType<typeof rotate>>;
    try {
      rotated = await rotate(payer.key);
    } finally {
      race.stop();
    }
    expect(rotated.status).toBe(200);
    const closed = await tabOf(thief.key, tab.id);
    expect(closed).toMatchObject({ status: 'CLOSED', closedBy: 'payer' });
    // The thief's uses landed until the close froze the tab; the one racing the close that landed was refused.
    expect(race.answers.at(-1)).toBe(409);
    const accepted = race.answers.filter((s) => s === 200).length;
    expect(cents(closed.used)).toBe(50 + accepted);
    expect(cents(await earned(thief.key))).toBe(50 + accepted);
    expect(await me(rotated.body.userKey)).toMatchObject({ held: { USD: 0 } });
    expect(cents((await me(rotated.body.userKey)).balances.USD)).toBe(2000 - 50 - accepted);
    expect((await use(thief.key, tab.id, 0.01)).status).toBe(409);
  });

  it('revocation: a use before every close cannot keep the grant’s tab open nor the revocation failing', async () => {
    const payer = await t.fundedUser({ USD: 20 });
    const agent = await t.enabledAgent();
    const grant = await grantFor(payer.key, agent.id);
    const tab = await open(agent.key, grant.key, 10);
    const race = racingThief(agent.key, tab.id);
    let revoked: Awaited<ReturnType<typeof t.call>>;
    try {
      revoked = await t.call('DELETE', `/api/v1/users/me/grants/${grant.id}`, { headers: { 'x-user-key': payer.key } });
    } finally {
      race.stop();
    }
    expect(revoked.status).toBe(200);
    const closed = await tabOf(agent.key, tab.id);
    expect(closed).toMatchObject({ status: 'CLOSED', closedBy: 'payer' });
    expect(cents(closed.used)).toBe(race.answers.filter((s) => s === 200).length);
    expect((await use(agent.key, tab.id, 0.01)).status).toBe(409);
  });

  it('block: a use before every close cannot make the block answer 503 forever with the tab open', async () => {
    const payer = await t.fundedUser({ USD: 20 });
    const agent = await t.enabledAgent();
    const tab = await open(agent.key, payer.key, 10);
    const race = racingThief(agent.key, tab.id);
    let put: Awaited<ReturnType<typeof t.call>>;
    try {
      put = await t.call('PUT', '/api/v1/users/me/policy', {
        headers: { 'x-user-key': payer.key },
        body: { agents: { [agent.id]: { blocked: true } } },
      });
    } finally {
      race.stop();
    }
    expect(put.status).toBe(200);
    expect(await tabOf(agent.key, tab.id)).toMatchObject({ status: 'CLOSED', closedBy: 'agent blocked' });
    expect((await use(agent.key, tab.id, 0.01)).status).toBe(409);
  });
});
