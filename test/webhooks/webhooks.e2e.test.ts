/**
 * Webhooks over HTTP against the local stack: the real routes, the outbox items in DynamoDB
 * Local, its stream read by the local poller, the real dispatcher and delivery handlers, local
 * SQS, and real receivers on 127.0.0.1. Deliveries are verified with the `standardwebhooks`
 * package, as a receiver would.
 */
import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import type * as z from 'zod';
import { config } from '../../functions/config';
import { createdWebhookBody, type webhookDeliveryBody, webhookDeliveryListBody } from '../../functions/contracts/responses/webhooks';
import { hashKey } from '../../functions/core/keys';
import { db } from '../../functions/store/client';
import { storedEvents } from '../../functions/store/events/outbox';
import { keys } from '../../functions/store/table';
import { auditAfterAll } from '../support/audit';
import { expectBody } from '../support/bodies';
import { eventually } from '../support/eventually';
import { solanaWallet } from '../support/payouts';
import { useTestStack } from '../support/stack';
import { attemptCounters, deliveryQueueDrained, dispatchedFromStream, finalAttempts, outboxEvents } from './delivery-records';
import { eventOf, type Receiver, startReceiver } from './receiver';

const t = useTestStack(
  { AUTH_CACHE_TTL_MS: '0', WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,1,1', WEBHOOK_TIMEOUT_MS: '1000' },
  { webhooks: { visibilityTimeoutSeconds: 2, pollIntervalMs: 50 } },
);
let receiver: Receiver;

beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(async () => {
  for (const key of Object.keys(t.stack.webhooks.hooks)) delete t.stack.webhooks.hooks[key as keyof typeof t.stack.webhooks.hooks];
  await receiver?.stop();
});
auditAfterAll();

type Delivery = z.output<typeof webhookDeliveryBody>;

const agentHeaders = (key: string) => ({ 'x-agent-key': key });

async function agentWebhook(key: string, body: Record<string, unknown>) {
  return expectBody(await t.call('POST', '/api/v1/agents/webhooks', { headers: agentHeaders(key), body }), createdWebhookBody, 201);
}

async function deliveries(key: string, id: string): Promise<Delivery[]> {
  return expectBody(
    await t.call('GET', `/api/v1/agents/webhooks/${id}/deliveries`, { headers: agentHeaders(key) }),
    webhookDeliveryListBody,
    200,
  ).deliveries;
}

/** The endpoint's deliveries list once `ready` holds for it. */
function deliveriesOnce(key: string, id: string, what: string, ready: (d: Delivery[]) => boolean, timeoutMs = 10_000): Promise<Delivery[]> {
  return eventually(
    what,
    async () => {
      const list = await deliveries(key, id);
      if (!ready(list)) throw new Error(`deliveries so far: ${JSON.stringify(list)}`);
      return list;
    },
    { timeoutMs, intervalMs: 100 },
  );
}

/** The outbox's events for this owner, as [type, subject id, event id]: every event that can be dispatched to its endpoints. */
async function outboxOf(owner: string): Promise<[string, unknown, string][]> {
  return (await outboxEvents()).filter((e) => e.owner === owner).map((e) => [e.type, e.data.id, e.id]);
}

/** A 1 USD charge by this agent (201): its `charge.succeeded` goes to the agent's endpoints. */
async function chargeBy(agent: { key: string }): Promise<string> {
  const user = await t.fundedUser({ USD: 5 });
  const res = await t.call<{ id: string }>('POST', '/api/v1/agents/charges', {
    headers: { ...agentHeaders(agent.key), 'x-user-key': user.key, 'idempotency-key': `wh-charge-${user.id}` },
    raw: '{"amount":1,"currency":"USD"}',
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

describe('registering endpoints', () => {
  it('shows the whsec_ secret once, lists endpoints without it, and deletes them', async () => {
    const agent = await t.enabledAgent();
    const created = await agentWebhook(agent.key, { url: receiver.url });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.events).toContain('payout.completed');
    expect(created.events).not.toContain('charge.approval_requested');
    const list = await t.call<{ webhooks: Record<string, unknown>[] }>('GET', '/api/v1/agents/webhooks', {
      headers: agentHeaders(agent.key),
    });
    expect(list.body.webhooks).toEqual([{ id: created.id, url: receiver.url, events: created.events, createdAt: created.createdAt }]);
    expect(list.text).not.toContain('whsec_');
    const del = await t.call('DELETE', `/api/v1/agents/webhooks/${created.id}`, { headers: agentHeaders(agent.key) });
    expect(del.status).toBe(204);
    const again = await t.call('DELETE', `/api/v1/agents/webhooks/${created.id}`, { headers: agentHeaders(agent.key) });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: 'webhook not found' });
  });

  it("answers 404 for another owner's endpoint, on every route", async () => {
    const owner = await t.enabledAgent();
    const other = await t.enabledAgent();
    const created = await agentWebhook(owner.key, { url: receiver.url });
    for (const [method, suffix] of [
      ['DELETE', ''],
      ['GET', '/deliveries'],
      ['POST', '/test'],
    ] as const) {
      const res = await t.call(method, `/api/v1/agents/webhooks/${created.id}${suffix}`, { headers: agentHeaders(other.key) });
      expect({ method, status: res.status, body: res.body }).toEqual({ method, status: 404, body: { error: 'webhook not found' } });
    }
    const user = await t.fundedUser();
    const res = await t.call('DELETE', `/api/v1/users/me/webhooks/${created.id}`, { headers: { 'x-user-key': user.key } });
    expect(res.status).toBe(404);
  });

  it('refuses bad URLs and unknown event types with a 400 naming the field, and creates nothing', async () => {
    const agent = await t.enabledAgent();
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'url is required'],
      [{ url: 'ftp://127.0.0.1/x' }, 'url must be an https URL (or http://127.0.0.1 locally)'],
      [{ url: 'http://example.com/hook' }, 'url must be an https URL (or http://127.0.0.1 locally)'],
      [{ url: 'https://10.0.0.7/hook' }, 'url must resolve to a public address'],
      [{ url: 'https://169.254.169.254/latest/meta-data' }, 'url must resolve to a public address'],
      [{ url: 'https://[fd00::1]/hook' }, 'url must resolve to a public address'],
      [{ url: 'https://[::ffff:10.0.0.1]/hook' }, 'url must resolve to a public address'],
      [{ url: 'https://user:pw@127.0.0.1/hook' }, 'url must not contain credentials'],
      [{ url: receiver.url, events: ['charge.approval_requested'] }, 'events: unknown event type "charge.approval_requested"'],
      [{ url: receiver.url, events: ['nope'] }, 'events: unknown event type "nope"'],
      [{ url: receiver.url, events: [] }, 'events'],
      [{ url: receiver.url, extra: 1 }, 'unknown field: extra'],
    ];
    for (const [body, message] of cases) {
      const res = await t.call<{ error: string }>('POST', '/api/v1/agents/webhooks', { headers: agentHeaders(agent.key), body });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.error).toContain(message);
    }
    const list = await t.call<{ webhooks: unknown[] }>('GET', '/api/v1/agents/webhooks', { headers: agentHeaders(agent.key) });
    expect(list.body.webhooks).toEqual([]);
  });

  it('allows at most 10 endpoints per owner (409), and one more after a delete', async () => {
    const agent = await t.enabledAgent();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await agentWebhook(agent.key, { url: `${receiver.url}/${i}` })).id);
    const eleventh = await t.call('POST', '/api/v1/agents/webhooks', { headers: agentHeaders(agent.key), body: { url: receiver.url } });
    expect(eleventh.status).toBe(409);
    expect(eleventh.body).toEqual({ error: 'webhook limit reached: at most 10 endpoints' });
    await t.call('DELETE', `/api/v1/agents/webhooks/${ids[0]}`, { headers: agentHeaders(agent.key) });
    expect((await agentWebhook(agent.key, { url: receiver.url })).id).toMatch(/^wh_/);
  });

  it('refuses a disabled agent on every webhook route (401 invalid or disabled agent key) and registers or sends nothing', async () => {
    const reg = await t.call<{ apiKey: string; agentId: string }>('POST', '/api/v1/agents/register', {
      body: { name: `wh-disabled-${Date.now()}`, email: 'dev@example.com', website: 'https://example.com' },
    });
    const headers = agentHeaders(reg.body.apiKey);
    const fakeId = 'wh_01jhx3k6v1f8q2n7c9m4p5r6s7';
    const calls = [
      ['POST', '/api/v1/agents/webhooks', { url: receiver.url }],
      ['GET', '/api/v1/agents/webhooks', undefined],
      ['DELETE', `/api/v1/agents/webhooks/${fakeId}`, undefined],
      ['GET', `/api/v1/agents/webhooks/${fakeId}/deliveries`, undefined],
      ['POST', `/api/v1/agents/webhooks/${fakeId}/test`, undefined],
    ] as const;
    for (const key of [reg.body.apiKey, 'ag_live_unknownunknownunknown']) {
      for (const [method, path, body] of calls) {
        const res = await t.call(method, path, { headers: agentHeaders(key), ...(body ? { body } : {}) });
        expect([method, path, res.status, res.body]).toEqual([method, path, 401, { error: 'invalid or disabled agent key' }]);
      }
    }
    // Enabled, it registers an endpoint and sees none from before.
    await t.call('PATCH', `/api/v1/admin/agents/${reg.body.agentId}`, { headers: t.admin, body: { enabled: true } });
    const list = await t.call<{ webhooks: unknown[] }>('GET', '/api/v1/agents/webhooks', { headers });
    expect(list.body.webhooks).toEqual([]);
    const created = await agentWebhook(reg.body.apiKey, { url: receiver.url, events: ['agent.enabled'] });
    // Disabled again, its endpoint stays but cannot be pinged; re-enabled, the endpoint hears agent.enabled.
    await t.call('PATCH', `/api/v1/admin/agents/${reg.body.agentId}`, { headers: t.admin, body: { enabled: false } });
    const ping = await t.call('POST', `/api/v1/agents/webhooks/${created.id}/test`, { headers });
    expect([ping.status, ping.body]).toEqual([401, { error: 'invalid or disabled agent key' }]);
    await t.call('PATCH', `/api/v1/admin/agents/${reg.body.agentId}`, { headers: t.admin, body: { enabled: true } });
    const got = await receiver.waitFor((r) => eventOf(r).type === 'agent.enabled');
    expect(eventOf(got).data).toMatchObject({ id: reg.body.agentId, enabled: true });
    new Webhook(created.secret).verify(got.body, got.headers as Record<string, string>);
    expect(receiver.received.map((r) => eventOf(r).type)).toEqual(['agent.enabled']);
  });
});

describe('test pings', () => {
  /** Every ping event the outbox holds for this endpoint (the table is this file's own). */
  async function queuedPings(webhookId: string): Promise<string[]> {
    const all = await db().send(new ScanCommand({ TableName: config().TABLE_NAME, ConsistentRead: true }));
    return (all.Items ?? []).flatMap((item) =>
      storedEvents(item)
        .filter((e) => e.webhookId === webhookId)
        .map((e) => e.id),
    );
  }

  it('allows 5 test pings a minute per endpoint: the 6th is 429 too many test events with Retry-After and queues nothing', async () => {
    const agent = await t.enabledAgent();
    const one = await agentWebhook(agent.key, { url: `${receiver.url}/one` });
    const two = await agentWebhook(agent.key, { url: `${receiver.url}/two` });
    const test = (id: string) =>
      t.call<{ id: string; error?: string }>('POST', `/api/v1/agents/webhooks/${id}/test`, { headers: agentHeaders(agent.key) });
    const accepted: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await test(one.id);
      expect(res.status).toBe(202);
      accepted.push(res.body.id);
    }
    const refused = await t.call('POST', `/api/v1/agents/webhooks/${one.id}/test`, { headers: agentHeaders(agent.key) });
    expect([refused.status, refused.body]).toEqual([429, { error: 'too many test events' }]);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Another endpoint has its own allowance.
    expect((await test(two.id)).status).toBe(202);
    expect((await queuedPings(one.id)).sort()).toEqual([...accepted].sort());
  });
});

describe('delivery', () => {
  it('delivers a ping within 2 s, signed per Standard Webhooks; a forged signature fails verification', async () => {
    const agent = await t.enabledAgent();
    const created = await agentWebhook(agent.key, { url: receiver.url });
    const started = Date.now();
    const ping = await t.call<{ id: string; type: string }>('POST', `/api/v1/agents/webhooks/${created.id}/test`, {
      headers: agentHeaders(agent.key),
    });
    expect(ping.status).toBe(202);
    expect(ping.body.type).toBe('ping');
    const got = await receiver.waitFor((r) => r.headers['webhook-id'] === ping.body.id, 2_000);
    expect(got.at - started).toBeLessThan(2_000);
    const wh = new Webhook(created.secret);
    expect(wh.verify(got.body, got.headers as Record<string, string>)).toEqual(JSON.parse(ping.text));
    expect(Object.keys(eventOf(got))).toEqual(['id', 'type', 'createdAt', 'data']);
    // Forged: the body changed, another secret, or a signature made up.
    const headers = got.headers as Record<string, string>;
    expect(() => wh.verify(got.body.replace('ping', 'pong'), headers)).toThrow();
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(got.body, headers)).toThrow();
    expect(() => wh.verify(got.body, { ...headers, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` })).toThrow();
    const list = await deliveriesOnce(agent.key, created.id, 'the ping recorded', (d) => d.length > 0);
    expect(list[0]).toMatchObject({ eventId: ping.body.id, type: 'ping', attempt: 1, status: 'succeeded', statusCode: 200, error: null });
  });

  it('delivers payout.completed within 2 s of the payout committing, in the same transaction', async () => {
    const agent = await t.earningAgent({ USDC: 20 });
    const created = await agentWebhook(agent.key, { url: receiver.url, events: ['payout.completed', 'payout.failed'] });
    const wallet = solanaWallet();
    t.stack.rails.solana.createTokenAccount(wallet);
    const wd = await t.call<{ payoutId: string }>('POST', '/api/v1/agents/withdraw', {
      headers: { ...agentHeaders(agent.key), 'idempotency-key': `wh-payout-${Date.now()}` },
      raw: `{"amount":10,"currency":"USDC","walletAddress":"${wallet}"}`,
    });
    expect(wd.status).toBe(200);
    const got = await receiver.waitFor((r) => eventOf(r).type === 'payout.completed', 15_000);
    const event = eventOf(got);
    expect(event.data).toMatchObject({ id: wd.body.payoutId, agentId: agent.id, status: 'COMPLETED', amount: 10, netAmount: 9.7 });
    new Webhook(created.secret).verify(got.body, got.headers as Record<string, string>);
    // Its processedAt is the payout's own: the event is the committed state.
    const payout = await t.call<{ processedAt: string }>('GET', `/api/v1/agents/withdraw?payoutId=${wd.body.payoutId}`, {
      headers: agentHeaders(agent.key),
    });
    expect(event.data.processedAt).toBe(payout.body.processedAt);
    // From the commit (the payout's final transaction, which holds the outbox item) to the receiver.
    expect(got.at - Date.parse(payout.body.processedAt)).toBeLessThan(2_000);
  });

  it('delivers payout.failed when the rail refuses the payout (refunded in the same transaction)', async () => {
    const agent = await t.earningAgent({ USD: 20 });
    await agentWebhook(agent.key, { url: receiver.url, events: ['payout.failed'] });
    const wd = await t.call<{ payoutId: string }>('POST', '/api/v1/agents/withdraw', {
      headers: { ...agentHeaders(agent.key), 'idempotency-key': `wh-payout-failed-${Date.now()}` },
      // The PayPal imitation refuses a payout to failed@…; the worker marks it FAILED (docs/rails.md).
      // (A Solana wallet without a token account is refused by the withdraw request itself now.)
      raw: '{"amount":10,"currency":"USD","walletAddress":"failed@example.com"}',
    });
    expect(wd.status).toBe(200);
    const got = await receiver.waitFor((r) => eventOf(r).type === 'payout.failed', 15_000);
    expect(eventOf(got).data).toMatchObject({ id: wd.body.payoutId, status: 'FAILED', failureReason: expect.any(String) });
  });

  it('retries a receiver that fails 3 times, then delivers exactly once more', async () => {
    const agent = await t.enabledAgent();
    const created = await agentWebhook(agent.key, { url: receiver.url, events: ['charge.succeeded'] });
    receiver.script = [500, 503, 502];
    const chargeId = await chargeBy(agent);
    // The outbox holds one event for the agent, the charge's: nothing else can be dispatched to its endpoint.
    const events = await outboxOf(`agent#${agent.id}`);
    expect(events.map(([type, about]) => [type, about])).toEqual([['charge.succeeded', chargeId]]);
    const eventId = events[0]?.[2] ?? '';
    // Delivered at the 4th attempt. Each attempt is counted before its send and none is counted once
    // the event is marked delivered, so these are all the sends there will ever be: a late
    // duplicate would have to be counted first, and would show here as a 5th.
    expect(await finalAttempts(created.id, [eventId], 15_000)).toEqual({ [eventId]: 4 });
    const got = receiver.received.filter((r) => r.headers['webhook-id'] === eventId);
    expect(got).toHaveLength(4);
    expect(receiver.received).toHaveLength(4);
    // Every attempt is signed afresh and verifies.
    for (const r of got) new Webhook(created.secret).verify(r.body, r.headers as Record<string, string>);
    const list = await deliveries(agent.key, created.id);
    expect(list.map((d) => [d.attempt, d.status, d.statusCode])).toEqual([
      [4, 'succeeded', 200],
      [3, 'failed', 502],
      [2, 'failed', 503],
      [1, 'failed', 500],
    ]);
  });

  it('marks a delivery dead after its last attempt, visible in the deliveries list', async () => {
    const agent = await t.enabledAgent();
    const created = await agentWebhook(agent.key, { url: receiver.url, events: ['charge.succeeded'] });
    receiver.script = [500, 500, 500, 500, 500, 500];
    await chargeBy(agent);
    const list = await deliveriesOnce(agent.key, created.id, 'the delivery dead', (d) => d[0]?.status === 'dead', 20_000);
    expect(list.map((d) => d.status)).toEqual(['dead', 'failed', 'failed', 'failed', 'failed']);
    expect(receiver.received).toHaveLength(5);
  });

  it('treats a receiver that times out like a failure: retried, nothing else changes', async () => {
    const agent = await t.enabledAgent();
    const created = await agentWebhook(agent.key, { url: receiver.url, events: ['charge.succeeded'] });
    receiver.delayMs = 1_500;
    await chargeBy(agent);
    const first = await deliveriesOnce(agent.key, created.id, 'the first attempt recorded', (d) => d.length > 0);
    expect(first[0]).toMatchObject({ type: 'charge.succeeded', status: 'failed', statusCode: null, error: 'timed out after 1000 ms' });
    receiver.delayMs = 0;
    const done = await deliveriesOnce(agent.key, created.id, 'the retry succeeded', (d) => d[0]?.status === 'succeeded');
    expect(done[0]?.status).toBe('succeeded');
  });

  it('tries a test ping once: a failing receiver gets one attempt, recorded dead, never retried', async () => {
    const agent = await t.enabledAgent();
    const created = await agentWebhook(agent.key, { url: receiver.url });
    receiver.script = [500, 500, 500];
    const ping = await t.call<{ id: string }>('POST', `/api/v1/agents/webhooks/${created.id}/test`, { headers: agentHeaders(agent.key) });
    const list = await deliveriesOnce(agent.key, created.id, 'the ping recorded', (d) => d.length > 0);
    // Dead at once, with no next attempt scheduled.
    expect(list[0]).toMatchObject({
      eventId: ping.body.id,
      type: 'ping',
      attempt: 1,
      status: 'dead',
      statusCode: 500,
      nextAttemptAt: null,
    });
    // Nothing is left that could send it again: the delivery queue holds no message (visible, in
    // flight or delayed), so its message was deleted, not put back for a retry (a retry would keep
    // it in flight until sent, and show below as a second request). The worker began one attempt.
    // (The tests before this one leave nothing in flight; the back-off test, whose held messages
    // stay in flight for its back-off, comes after it.)
    await deliveryQueueDrained(t);
    expect(await attemptCounters(created.id)).toEqual({ [ping.body.id]: { attempts: 1 } });
    expect(receiver.received).toHaveLength(1);
    expect(await deliveries(agent.key, created.id)).toHaveLength(1);
  });

  it('backs an endpoint off after 5 consecutive failures: its deliveries are held, not sent, until a ping succeeds', async () => {
    const agent = await t.enabledAgent();
    const created = await agentWebhook(agent.key, { url: receiver.url, events: ['charge.succeeded'] });
    receiver.script = Array<number>(20).fill(500);
    await Promise.all(Array.from({ length: 5 }, () => chargeBy(agent)));
    // Their retries (1 s later) find the endpoint backed off: recorded, not sent.
    const held = await deliveriesOnce(
      agent.key,
      created.id,
      'five deliveries held',
      (d) => d.filter((x) => x.error?.startsWith('not sent: endpoint backed off')).length >= 5,
      15_000,
    );
    expect(held.filter((x) => x.statusCode === 500)).toHaveLength(5);
    expect(held.find((x) => x.error?.startsWith('not sent'))).toMatchObject({ status: 'failed', statusCode: null, attempt: 2 });
    expect(receiver.received).toHaveLength(5);
    // A new event waits too.
    const charge = await chargeBy(agent);
    await deliveriesOnce(agent.key, created.id, 'the new event held', (d) =>
      d.some((x) => x.attempt === 1 && x.error?.startsWith('not sent')),
    );
    expect(receiver.received).toHaveLength(5);
    // The owner fixes the receiver and pings (a ping is always sent): the breaker closes, events flow again.
    receiver.script = [];
    const ping = await t.call<{ id: string }>('POST', `/api/v1/agents/webhooks/${created.id}/test`, { headers: agentHeaders(agent.key) });
    await receiver.waitFor((r) => r.headers['webhook-id'] === ping.body.id);
    await deliveriesOnce(agent.key, created.id, 'the ping recorded', (d) => d.some((x) => x.type === 'ping' && x.status === 'succeeded'));
    const after = await chargeBy(agent);
    const next = await receiver.waitFor((r) => eventOf(r).data.id === after, 5_000);
    expect(eventOf(next).type).toBe('charge.succeeded');
    // The one held before is still held (until its back-off ends), not lost.
    expect(receiver.received.some((r) => eventOf(r).data.id === charge)).toBe(false);
  });

  it('loses nothing when the worker dies after sending but before recording (same webhook-id again)', async () => {
    const agent = await t.enabledAgent();
    const created = await agentWebhook(agent.key, { url: receiver.url });
    let crashes = 0;
    // Only this endpoint's sends: a delivery of an earlier test's endpoint must not take the crash.
    t.stack.webhooks.hooks.afterSend = (message) => {
      if (message.webhookId === created.id && crashes++ === 0) throw new Error('injected crash after send');
    };
    const ping = await t.call<{ id: string }>('POST', `/api/v1/agents/webhooks/${created.id}/test`, { headers: agentHeaders(agent.key) });
    const list = await deliveriesOnce(agent.key, created.id, 'the ping delivered', (d) => d.some((x) => x.status === 'succeeded'), 15_000);
    // Two sends, both counted, and no third can be: the second was marked delivered.
    expect(await finalAttempts(created.id, [ping.body.id])).toEqual({ [ping.body.id]: 2 });
    const got = receiver.received.filter((r) => r.headers['webhook-id'] === ping.body.id);
    expect(got.length).toBe(2);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ status: 'succeeded', attempt: 2 });
  });
});

describe('agent events', () => {
  it('reports an operator disabling the agent in the DynamoDB console (no API call) as agent.disabled', async () => {
    const agent = await t.enabledAgent();
    const created = await agentWebhook(agent.key, { url: receiver.url, events: ['agent.disabled', 'agent.enabled'] });
    // What the console does: an UpdateItem on the agent item, nothing else.
    await db().send(
      new UpdateCommand({
        TableName: config().TABLE_NAME,
        Key: keys.agent(hashKey(agent.key)),
        UpdateExpression: 'SET enabled = :off',
        ExpressionAttributeValues: { ':off': false },
      }),
    );
    const got = await receiver.waitFor((r) => eventOf(r).type === 'agent.disabled', 3_000);
    expect(eventOf(got).data).toMatchObject({ id: agent.id, enabled: false });
    new Webhook(created.secret).verify(got.body, got.headers as Record<string, string>);
    // A write that does not flip `enabled` reports nothing.
    await db().send(
      new UpdateCommand({
        TableName: config().TABLE_NAME,
        Key: keys.agent(hashKey(agent.key)),
        UpdateExpression: 'SET website = :w',
        ExpressionAttributeValues: { ':w': 'https://example.org' },
      }),
    );
    // The agent item's stream records, which are the dispatcher's outbox for agent events, made
    // into events by the dispatcher's own code: the enabling before the endpoint existed (not
    // routed to it), the console's disable, and nothing for the website write. No outbox event
    // names the agent. So agent.disabled is all this endpoint can ever be sent.
    const stream = await eventually('the website write in the stream', async () => {
      const found = await dispatchedFromStream(keys.agent(hashKey(agent.key)));
      expect(found.images.at(-1)?.website).toBe('https://example.org');
      return found;
    });
    expect(stream.events.map((e) => e.type)).toEqual(['agent.enabled', 'agent.disabled']);
    expect(stream.events[0]?.createdAt.localeCompare(created.createdAt)).toBe(-1);
    expect(await outboxOf(`agent#${agent.id}`)).toEqual([]);
    const disabled = stream.events[1]?.id ?? '';
    expect(eventOf(got).id).toBe(disabled);
    // And it is sent once: delivered at its first attempt, after which no attempt is counted or sent.
    expect(await finalAttempts(created.id, [disabled])).toEqual({ [disabled]: 1 });
    expect(receiver.received).toHaveLength(1);
  });
});

describe('user endpoints', () => {
  it('registers under /users/me/webhooks with user event types only, and pings', async () => {
    const user = await t.fundedUser();
    const headers = { 'x-user-key': user.key };
    const refused = await t.call<{ error: string }>('POST', '/api/v1/users/me/webhooks', {
      headers,
      body: { url: receiver.url, events: ['payout.completed'] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain('events: unknown event type "payout.completed"');
    const created = expectBody(
      await t.call('POST', '/api/v1/users/me/webhooks', { headers, body: { url: receiver.url } }),
      createdWebhookBody,
      201,
    );
    expect(created.events).toEqual([
      'charge.approval_requested',
      'charge.succeeded',
      'charge.failed',
      'charge.expired',
      'topup.completed',
      'grant.created',
      'grant.revoked',
      'x402.purchase.succeeded',
      'x402.purchase.expired',
      'user.passkey.added',
      // DESIGN §27: a grant's limit alerts, to the payer.
      'grant.limit.approaching',
      'grant.limit.reached',
      'tab.closed',
    ]);
    const ping = await t.call<{ id: string }>('POST', `/api/v1/users/me/webhooks/${created.id}/test`, { headers });
    const got = await receiver.waitFor((r) => r.headers['webhook-id'] === ping.body.id, 2_000);
    new Webhook(created.secret).verify(got.body, got.headers as Record<string, string>);
    const list = await t.call<{ webhooks: unknown[] }>('GET', '/api/v1/users/me/webhooks', { headers });
    expect(list.body.webhooks).toHaveLength(1);
    const unauth = await t.call('GET', '/api/v1/users/me/webhooks', { headers: { 'x-user-key': 'uk_live_nope' } });
    expect(unauth.status).toBe(401);
  });
});
