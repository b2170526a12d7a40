/**
 * Part five's attacks (DESIGN §27–§29, docs/tabs.md "Rotation and revocation", docs/receipts.md),
 * over HTTP against one local stack, the ledger audit after each case.
 *
 * Tabs: a thief holding the leaked account key (or an agent whose grant is being revoked, or whose
 * payer blocks it) keeps metering its tab while the payer ends the authorisation. A close is
 * conditioned on `used` being what it read, so a use that lands between the close's read and its
 * write sends it round again; a thief that always lands one there (modelled deterministically: a
 * use is committed right before each close's transaction) must not keep the tab open, nor fail
 * the rotation (the leaked key's remedy), the revocation or the block forever. Also: a tab opened
 * between the rotation's two sweeps, an opening racing a block, a block of a tab awaiting approval, old tab ids
 * after the close, another payer's tab, amounts that would round, and a tab whose TTL lapses
 * before its close.
 *
 * Receipts: `xr` ids of another agent, crafted forms of an `xr` id (suffix, case, URL-encoding,
 * traversal, length), a payer's key on an x402 refund's receipt, and a real receipt altered (kid
 * swapped, payload type swapped) under stock jose.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { asFunction } from '../../bin/local/function-scope';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { expireDueCharges } from '../../functions/use-cases/charges/expiry';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { useRefundFixture } from '../support/x402-refunds';

const t = useTestStack({}, { sweepIntervalMs: 0 });
const f = useRefundFixture(t);
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

type Transact = { TransactItems?: { Put?: { Item?: Record<string, unknown> }; Update?: { UpdateExpression?: string } }[] };
let hookSeq = 0;
/** Runs `action` once, right before the first TransactWriteItems that `match` names is sent. */
function rightBefore(match: (input: Transact) => boolean, action: () => Promise<unknown>) {
  const name = `before-${++hookSeq}`;
  const stack = db().middlewareStack;
  let done = false;
  stack.add(
    (next, context) => async (args) => {
      if (!done && context.commandName === 'TransactWriteItemsCommand' && match(args.input as Transact)) {
        done = true;
        await action();
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return { ran: () => done, stop: () => void stack.remove(name) };
}
const opensATab = (input: Transact) => (input.TransactItems ?? []).some((i) => i.Put?.Item?.type === 'Tab');
const rotatesTheKey = (input: Transact) => (input.TransactItems ?? []).some((i) => i.Update?.UpdateExpression === 'SET keyHash = :new');

describe('tabs opened while the authorisation ends', () => {
  it('the thief opens a tab with the leaked key between the rotation’s first sweep and the new key: the second sweep closes it', async () => {
    const payer = await t.fundedUser({ USD: 20 });
    const thief = await t.enabledAgent();
    let late: Tab | undefined;
    const hook = rightBefore(rotatesTheKey, async () => {
      late = await open(thief.key, payer.key, 6);
      expect((await use(thief.key, late.id, 1.25)).status).toBe(200);
    });
    let rotated: Awaited<ReturnType<typeof rotate>>;
    try {
      rotated = await rotate(payer.key);
    } finally {
      hook.stop();
    }
    expect([hook.ran(), rotated.status]).toEqual([true, 200]);
    expect(await tabOf(thief.key, late?.id ?? '')).toMatchObject({ status: 'CLOSED', used: 1.25, closedBy: 'payer' });
    expect((await use(thief.key, late?.id ?? '', 0.25)).status).toBe(409);
    // The old key opens nothing more.
    const after = await t.call('POST', '/api/v1/agents/tabs', {
      headers: { 'x-agent-key': thief.key, 'x-user-key': payer.key, 'idempotency-key': key() },
      body: { currency: 'USD', limit: 1 },
    });
    expect(after.status).toBe(401);
    expect(await me(rotated.body.userKey)).toMatchObject({ balances: { USD: 18.75 }, held: { USD: 0 } });
  });

  it('a tab opening judged before the block commits after it: refused, never OPEN behind a 200 block', async () => {
    const payer = await t.fundedUser({ USD: 20 });
    const agent = await t.enabledAgent();
    let put: Awaited<ReturnType<typeof t.call>> | undefined;
    const hook = rightBefore(opensATab, async () => {
      put = await t.call('PUT', '/api/v1/users/me/policy', {
        headers: { 'x-user-key': payer.key },
        body: { agents: { [agent.id]: { blocked: true } } },
      });
    });
    let opened: Awaited<ReturnType<typeof t.call<Tab>>>;
    try {
      opened = await t.call<Tab>('POST', '/api/v1/agents/tabs', {
        headers: { 'x-agent-key': agent.key, 'x-user-key': payer.key, 'idempotency-key': key() },
        body: { currency: 'USD', limit: 5 },
      });
    } finally {
      hook.stop();
    }
    expect(put?.status).toBe(200);
    expect([opened.status, opened.body.error]).toEqual([403, 'agent blocked by user']);
    const tabs = await t.call<{ data: Tab[] }>('GET', '/api/v1/users/me/tabs?status=OPEN', { headers: { 'x-user-key': payer.key } });
    expect(tabs.body.data).toEqual([]);
    expect(await me(payer.key)).toMatchObject({ balances: { USD: 20 }, held: { USD: 0 } });
  });
});

describe('a tab’s TTL lapsing during its close', () => {
  it('the sweeper closes it between the payer’s read and write: the payer is answered the one close, captured once', async () => {
    const payer = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const tab = await open(agent.key, payer.key, 4, { ttlSeconds: 60 });
    expect((await use(agent.key, tab.id, 1.5)).status).toBe(200);
    let swept: Awaited<ReturnType<typeof expireDueCharges>> | undefined;
    const hook = rightBefore(closesTab(tab.id), async () => {
      // As the sweeper function (its own grant), not as the close whose request this hook runs in.
      swept = await asFunction('sweeper', () => expireDueCharges(new Date(Date.now() + 120_000)));
    });
    let closed: Awaited<ReturnType<typeof t.call<Tab>>>;
    try {
      closed = await t.call<Tab>('POST', `/api/v1/users/me/tabs/${tab.id}/close`, { headers: { 'x-user-key': payer.key } });
    } finally {
      hook.stop();
    }
    expect(swept?.expired).toBeGreaterThanOrEqual(1);
    expect([closed.status, closed.body.status, closed.body.used, closed.body.closedBy]).toEqual([200, 'CLOSED', 1.5, 'expiry']);
    expect((await use(agent.key, tab.id, 0.5)).status).toBe(409);
    expect(await me(payer.key)).toMatchObject({ balances: { USD: 8.5 }, held: { USD: 0 } });
    expect(await earned(agent.key)).toBe(1.5);
  });
});

describe('the block and a tab waiting for the payer', () => {
  it('a block closes a tab still awaiting approval; the payer’s approval after it moves nothing', async () => {
    const payer = await t.fundedUser({ USD: 20 });
    const agent = await t.enabledAgent();
    const asPayer = { 'x-user-key': payer.key };
    expect((await t.call('PUT', '/api/v1/users/me/policy', { headers: asPayer, body: { approvalAbove: { USD: 1 } } })).status).toBe(200);
    const waiting = await t.call<Tab>('POST', '/api/v1/agents/tabs', {
      headers: { 'x-agent-key': agent.key, 'x-user-key': payer.key, 'idempotency-key': key() },
      body: { currency: 'USD', limit: 5 },
    });
    expect([waiting.status, waiting.body.status]).toEqual([202, 'PENDING_APPROVAL']);
    const block = await t.call('PUT', '/api/v1/users/me/policy', {
      headers: asPayer,
      body: { approvalAbove: { USD: 1 }, agents: { [agent.id]: { blocked: true } } },
    });
    expect(block.status).toBe(200);
    expect(await tabOf(agent.key, waiting.body.id)).toMatchObject({ status: 'CLOSED', used: 0, closedBy: 'agent blocked' });
    const approve = await t.call('POST', `/api/v1/users/me/charges/${waiting.body.chargeId}/approve`, { headers: asPayer });
    expect(approve.status).toBe(409);
    expect(await tabOf(agent.key, waiting.body.id)).toMatchObject({ status: 'CLOSED' });
    expect((await use(agent.key, waiting.body.id, 0.5)).status).toBe(409);
    expect(await me(payer.key)).toMatchObject({ balances: { USD: 20 }, held: { USD: 0 } });
  });
});

describe('tab ids and amounts', () => {
  it('a forged id (another agent’s tab with the thief’s id on it), and another payer’s close, are 404; nothing moves', async () => {
    const payer = await t.fundedUser({ USD: 10 });
    const owner = await t.enabledAgent();
    const thief = await t.enabledAgent();
    const tab = await open(owner.key, payer.key, 5);
    const forged = `${tab.id.slice(0, 27)}${thief.id}`;
    const h = { 'x-agent-key': thief.key };
    for (const id of [forged, tab.id.toUpperCase(), `${tab.id}%2F..%2F`, encodeURIComponent(`../${tab.id}`), `${tab.id}x`]) {
      const answers = await Promise.all([
        t.call<Tab>('GET', `/api/v1/agents/tabs/${id}`, { headers: h }),
        use(thief.key, id, 1),
        t.call<Tab>('POST', `/api/v1/agents/tabs/${id}/close`, { headers: h }),
      ]);
      expect([id, ...answers.map((a) => a.status)]).toEqual([id, 404, 404, 404]);
    }
    const stranger = await t.fundedUser({ USD: 1 });
    const foreign = await t.call<Tab>('POST', `/api/v1/users/me/tabs/${tab.id}/close`, { headers: { 'x-user-key': stranger.key } });
    expect([foreign.status, foreign.body.error]).toEqual([404, 'tab not found']);
    expect(await tabOf(owner.key, tab.id)).toMatchObject({ status: 'OPEN', used: 0 });
  });

  it('an old tab id after its close: uses refused, the opening replayed answers as first and holds nothing again', async () => {
    const payer = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const openKey = key();
    const req = () =>
      t.call<Tab>('POST', '/api/v1/agents/tabs', {
        headers: { 'x-agent-key': agent.key, 'x-user-key': payer.key, 'idempotency-key': openKey },
        body: { currency: 'USD', limit: 4 },
      });
    const first = await req();
    expect(first.status).toBe(201);
    expect((await use(agent.key, first.body.id, 1)).status).toBe(200);
    const closed = await t.call<Tab>('POST', `/api/v1/agents/tabs/${first.body.id}/close`, { headers: { 'x-agent-key': agent.key } });
    expect(closed.body).toMatchObject({ status: 'CLOSED', used: 1 });
    const replay = await req();
    expect([replay.status, replay.text]).toEqual([201, first.text]);
    const late = await use(agent.key, first.body.id, 1);
    expect([late.status, late.body.error]).toEqual([409, 'tab is not open']);
    const again = await t.call<Tab>('POST', `/api/v1/agents/tabs/${first.body.id}/close`, { headers: { 'x-agent-key': agent.key } });
    expect(again.body).toMatchObject({ status: 'CLOSED', used: 1 });
    expect(await me(payer.key)).toMatchObject({ balances: { USD: 9 }, held: { USD: 0 } });
    expect(await earned(agent.key)).toBe(1);
  });

  it('amounts that would round, negative, huge or not numbers are 400; nothing is taken', async () => {
    const payer = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const tab = await open(agent.key, payer.key, 5);
    const raws = [
      '{"amount":0.005}',
      '{"amount":1.005}',
      '{"amount":4.9999999999999999}',
      '{"amount":-0.01}',
      '{"amount":-0}',
      '{"amount":1e400}',
      '{"amount":1e21}',
      '{"amount":9007199254740993}',
      '{"amount":"0.5"}',
      '{"amount":"1e2"}',
      '{"amount":null}',
      '{"amount":true}',
      '{"amount":[1]}',
      '{"amount":{"value":1}}',
      '{"amount":NaN}',
      '{"amount":Infinity}',
      '{"amount":0x10}',
      '{"amount":1,"amount":2}',
    ];
    for (const raw of raws) {
      const bad = await t.call<{ error: string }>('POST', `/api/v1/agents/tabs/${tab.id}/usage`, {
        headers: { 'x-agent-key': agent.key, 'idempotency-key': key() },
        raw,
      });
      expect([raw, bad.status, typeof bad.body?.error]).toEqual([raw, 400, 'string']);
    }
    // Past the limit by a cent: 409, never rounded down into it.
    const over = await use(agent.key, tab.id, 5.01);
    expect([over.status, over.body.error]).toEqual([409, 'tab limit exceeded']);
    expect(await tabOf(agent.key, tab.id)).toMatchObject({ status: 'OPEN', used: 0 });
    const exact = await use(agent.key, tab.id, 5);
    expect([exact.status, exact.body.used]).toEqual([200, 5]);
  });

  it('a tab whose TTL lapsed before its close: uses refused; the sweeper and the payer closing at once capture it once', async () => {
    const payer = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const tab = await open(agent.key, payer.key, 5, { ttlSeconds: 60 });
    expect((await use(agent.key, tab.id, 2.5)).status).toBe(200);
    // Its end passes (the tab item's clock; the hold's is the sweeper's, given a time past it below).
    await db().send(
      new UpdateCommand({
        TableName: config().TABLE_NAME,
        Key: keys.tab(tab.id),
        UpdateExpression: 'SET expiresAt = :past',
        ExpressionAttributeValues: { ':past': new Date(Date.now() - 1000).toISOString() },
      }),
    );
    const late = await use(agent.key, tab.id, 0.5);
    expect([late.status, late.body.error]).toEqual([409, 'tab is not open']);
    const [, closed] = await Promise.all([
      expireDueCharges(new Date(Date.now() + 120_000)),
      t.call<Tab>('POST', `/api/v1/users/me/tabs/${tab.id}/close`, { headers: { 'x-user-key': payer.key } }),
    ]);
    expect([closed.status, closed.body.status, closed.body.used]).toEqual([200, 'CLOSED', 2.5]);
    expect(await tabOf(agent.key, tab.id)).toMatchObject({ status: 'CLOSED', used: 2.5 });
    expect(await me(payer.key)).toMatchObject({ balances: { USD: 7.5 }, held: { USD: 0 } });
    expect(await earned(agent.key)).toBe(2.5);
  });
});

const NOT_FOUND = [404, { error: 'receipt not found' }];
const receiptOf = (id: string, headers: Record<string, string>) =>
  t.call<{ id: string; receipt: string; error?: string }>('GET', `/api/v1/receipts/${id}`, { headers });
const jwks = async () => createLocalJWKSet((await t.call<JSONWebKeySet>('GET', '/.well-known/jwks.json')).body);
const verifies = async (jws: string) =>
  compactVerify(jws, await jwks(), { algorithms: ['ES256'] }).then(
    () => true,
    () => false,
  );
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const part = (jws: string, i: 0 | 1) =>
  JSON.parse(Buffer.from(jws.split('.')[i] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
/** A link's path on this stack (links are absolute on PUBLIC_BASE_URL, the stack's address). */
const pathOf = (url: string | undefined) => {
  expect(url?.startsWith(`${t.stack.url}/api/v1/receipts/`)).toBe(true);
  return (url as string).slice(t.stack.url.length);
};

describe('receipts of x402 refunds, attacked', () => {
  it('only the refunding agent reads its xr receipt; crafted forms of the id are 404; an altered JWS fails stock jose', async () => {
    const seller = await f.seller();
    const paymentId = await f.pay(seller);
    const refund = await f.refund(seller.key, paymentId, { body: { amount: 0.004 } });
    expect(refund.status).toBe(202);
    const done = await f.untilFinal(seller.key, refund.body.id);
    expect(done.status).toBe('COMPLETED');
    const id = refund.body.id;
    const own = await receiptOf(id, { 'x-agent-key': seller.key });
    expect([own.status, own.body.id]).toEqual([200, id]);
    expect(await verifies(own.body.receipt)).toBe(true);
    expect(part(own.body.receipt, 1)).toMatchObject({ type: 'refund', id, amount: '0.004', payer: { kind: 'agent', id: seller.id } });
    // The read's link names the same receipt, on the service's own address.
    const read = await f.read(seller.key, id);
    expect(read.body).toMatchObject({ status: 'COMPLETED' });
    expect(pathOf((read.body as { receiptUrl?: string }).receiptUrl)).toBe(`/api/v1/receipts/${id}`);

    const stranger = await t.enabledAgent();
    const payer = await t.fundedUser({ USD: 1 });
    for (const headers of [{ 'x-agent-key': stranger.key }, { 'x-user-key': payer.key }] as Record<string, string>[]) {
      const res = await receiptOf(id, headers);
      expect([res.status, res.body]).toEqual(NOT_FOUND);
    }
    const crafted = [
      `${id}.refund`,
      `${id}.refund.refund`,
      id.toUpperCase(),
      `XR${id.slice(2)}`,
      `${id}%20`,
      `${id}%00`,
      `${id}%2Frefund`,
      `..%2F${id}`,
      `%2E%2E%2F%2E%2E%2Fagents%2Fx402%2Frefunds%2F${id}`,
      `${id}${'0'.repeat(4000)}`,
      `${paymentId}.refund`,
    ];
    for (const craftedId of crafted) {
      const res = await receiptOf(craftedId, { 'x-agent-key': seller.key });
      expect([craftedId.slice(0, 80), res.status]).toEqual([craftedId.slice(0, 80), 404]);
    }
    // Percent-encoding a plain letter names the same id: if it is read, it is the same receipt, never another.
    const encoded = await receiptOf(`%78${id.slice(1)}`, { 'x-agent-key': seller.key });
    expect(encoded.status === 404 || (encoded.status === 200 && encoded.body.id === id)).toBe(true);
    const strangerEncoded = await receiptOf(`%78${id.slice(1)}`, { 'x-agent-key': stranger.key });
    expect([strangerEncoded.status, strangerEncoded.body]).toEqual(NOT_FOUND);

    // Altered: the type swapped (signature kept), the kid swapped to another or an unknown one.
    const [header, payload, signature] = own.body.receipt.split('.');
    const asCharge = `${header}.${b64({ ...part(own.body.receipt, 1), type: 'charge' })}.${signature}`;
    const asPurchase = `${header}.${b64({ ...part(own.body.receipt, 1), type: 'x402_purchase', amount: '4' })}.${signature}`;
    const published = (await t.call<JSONWebKeySet>('GET', '/.well-known/jwks.json')).body.keys.map((k) => String(k.kid));
    const kid = String(part(own.body.receipt, 0).kid);
    const otherKids = [...published.filter((k) => k !== kid), `${kid}x`, ''];
    for (const jws of [
      asCharge,
      asPurchase,
      ...otherKids.map((k) => `${b64({ ...part(own.body.receipt, 0), kid: k })}.${payload}.${signature}`),
    ]) {
      expect(await verifies(jws)).toBe(false);
    }
  });
});

describe('receipt links, attacked', () => {
  type Charge = { id: string; status: string; receiptUrl?: string; refundReceiptUrl?: string; type?: string; tabId?: string };
  const agentPost = (agentKey: string, path: string, body: unknown, idem = key()) =>
    t.call<Charge>('POST', path, { headers: { 'x-agent-key': agentKey, 'idempotency-key': idem }, body });

  it('answers replayed after a refund send the first bytes, with no link the first did not have; strangers get 404 on every link', async () => {
    const agent = await t.enabledAgent();
    const payer = await t.fundedUser({ USD: 20 });
    const stranger = await t.enabledAgent();
    const otherPayer = await t.fundedUser({ USD: 1 });
    const createKey = key();
    const create = () =>
      t.call<Charge>('POST', '/api/v1/agents/charges', {
        headers: { 'x-agent-key': agent.key, 'x-user-key': payer.key, 'idempotency-key': createKey },
        body: { amount: 3, currency: 'USD' },
      });
    const made = await create();
    const holdKey = key();
    const hold = await t.call<Charge>('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': agent.key, 'x-user-key': payer.key, 'idempotency-key': holdKey },
      body: { amount: 4, currency: 'USD', capture: false },
    });
    expect(hold.body).not.toHaveProperty('receiptUrl');
    const captureKey = key();
    const captured = await agentPost(agent.key, `/api/v1/agents/charge/${hold.body.id}/capture`, { amount: 2 }, captureKey);
    const refundKey = key();
    const refunded = await agentPost(agent.key, `/api/v1/agents/charge/${made.body.id}/refund`, { amount: 1 }, refundKey);
    expect(refunded.body.refundReceiptUrl).toBeDefined();
    await agentPost(agent.key, `/api/v1/agents/charge/${hold.body.id}/refund`, { amount: 0.5 });
    await agentPost(agent.key, `/api/v1/agents/charge/${made.body.id}/refund`, { amount: 0.5 });
    // Every replay: the first answer's bytes (no refundReceiptUrl where it had none, the first refund's total).
    const replays = await Promise.all([
      create(),
      agentPost(agent.key, `/api/v1/agents/charge/${hold.body.id}/capture`, { amount: 2 }, captureKey),
      agentPost(agent.key, `/api/v1/agents/charge/${made.body.id}/refund`, { amount: 1 }, refundKey),
    ]);
    expect(replays.map((r) => r.text)).toEqual([made.text, captured.text, refunded.text]);
    expect(made.body).not.toHaveProperty('refundReceiptUrl');
    // Each link names the caller's own movement: its parties read it, nobody else.
    for (const url of [made.body.receiptUrl, captured.body.receiptUrl, refunded.body.refundReceiptUrl]) {
      const path = pathOf(url);
      expect(path).not.toContain(payer.id);
      for (const headers of [{ 'x-agent-key': agent.key }, { 'x-user-key': payer.key }] as Record<string, string>[]) {
        const res = await t.call<{ receipt: string }>('GET', path, { headers });
        expect([path, res.status, await verifies(res.body.receipt)]).toEqual([path, 200, true]);
      }
      for (const headers of [{ 'x-agent-key': stranger.key }, { 'x-user-key': otherPayer.key }] as Record<string, string>[]) {
        const res = await t.call('GET', path, { headers });
        expect([path, res.status, res.body]).toEqual([path, ...NOT_FOUND]);
      }
    }
  });

  it('a tab: its open hold and an unused close have no link; a close at what it used links a receipt of exactly that', async () => {
    const payer = await t.fundedUser({ USD: 20 });
    const agent = await t.enabledAgent();
    const used = await open(agent.key, payer.key, 5);
    const unused = await open(agent.key, payer.key, 2);
    const still = await open(agent.key, payer.key, 1);
    expect((await use(agent.key, used.id, 1.75)).status).toBe(200);
    for (const tab of [used, unused]) {
      expect((await t.call('POST', `/api/v1/users/me/tabs/${tab.id}/close`, { headers: { 'x-user-key': payer.key } })).status).toBe(200);
    }
    const history = (await t.call<{ data: Charge[] }>('GET', '/api/v1/users/me/charges', { headers: { 'x-user-key': payer.key } })).body
      .data;
    const row = (tabId: string) => history.find((c) => c.tabId === tabId);
    expect(row(still.id)).toMatchObject({ status: 'PENDING', type: 'tab' });
    expect(row(still.id)).not.toHaveProperty('receiptUrl');
    expect(row(unused.id)).toMatchObject({ status: 'FAILED' });
    expect(row(unused.id)).not.toHaveProperty('receiptUrl');
    const link = pathOf(row(used.id)?.receiptUrl);
    expect(link).toBe(`/api/v1/receipts/${used.chargeId}`);
    for (const headers of [{ 'x-agent-key': agent.key }, { 'x-user-key': payer.key }] as Record<string, string>[]) {
      const res = await t.call<{ receipt: string }>('GET', link, { headers });
      expect(res.status).toBe(200);
      expect(await verifies(res.body.receipt)).toBe(true);
      expect(part(res.body.receipt, 1)).toMatchObject({ type: 'charge', amount: '1.75', status: 'SUCCESS' });
    }
  });
});
