/**
 * Charge and top-up events end to end (issue 14 phase 2): the real charge, approval, lifecycle
 * and top-up routes write their events in their own transactions; the local stream poller, the
 * dispatcher, local SQS and the delivery worker bring them to real receivers on 127.0.0.1.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { config } from '../../functions/config';
import { webhookSqs } from '../../functions/queue/webhook-queue';
import { db } from '../../functions/store/client';
import { expireDueCharges } from '../../functions/use-cases/charges/expiry';
import { auditAfterAll } from '../support/audit';
import { eventually } from '../support/eventually';
import { useTestStack } from '../support/stack';
import { getTopup, openTopup, type TopupBody } from '../topups/support';
import { deliveryQueueDrained, finalAttempts, outboxAbout } from './delivery-records';
import { eventOf, type Received, type Receiver, startReceiver } from './receiver';

const t = useTestStack(
  { AUTH_CACHE_TTL_MS: '0', WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,1,1', WEBHOOK_TIMEOUT_MS: '1000' },
  { webhooks: { visibilityTimeoutSeconds: 2, pollIntervalMs: 50 } },
);
let agentRx: Receiver;
let userRx: Receiver;

beforeEach(async () => {
  agentRx = await startReceiver();
  userRx = await startReceiver();
});
afterEach(async () => {
  await agentRx?.stop();
  await userRx?.stop();
});
auditAfterAll();

interface ChargeBody {
  id: string;
  status: string;
  amount: number;
  pendingReason: string | null;
  failureReason: string | null;
  approvalUrl?: string;
  error?: string;
}

/** An enabled agent and a funded user, each with an endpoint (every event type) at its receiver. */
async function parties(credits: Record<string, number> = { USD: 100 }) {
  const agent = await t.enabledAgent();
  const user = await t.fundedUser(credits);
  const agentHook = await t.call<{ id: string; secret: string }>('POST', '/api/v1/agents/webhooks', {
    headers: { 'x-agent-key': agent.key },
    body: { url: agentRx.url },
  });
  const userHook = await t.call<{ id: string; secret: string }>('POST', '/api/v1/users/me/webhooks', {
    headers: { 'x-user-key': user.key },
    body: { url: userRx.url },
  });
  expect([agentHook.status, userHook.status]).toEqual([201, 201]);
  return { agent, user, agentHook: agentHook.body, userHook: userHook.body };
}

const charge = (agentKey: string, userKey: string, key: string, body: Record<string, unknown>) =>
  t.call<ChargeBody>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': key },
    body: { currency: 'USD', description: `charge ${key}`, ...body },
  });

const lifecycle = (agentKey: string, id: string, action: 'capture' | 'release' | 'refund', key: string, body?: unknown) =>
  t.call<ChargeBody>('POST', `/api/v1/agents/charge/${id}/${action}`, {
    headers: { 'x-agent-key': agentKey, 'idempotency-key': key },
    ...(body ? { body } : {}),
  });

const userAct = (userKey: string, id: string, action: 'approve' | 'decline') =>
  t.call<ChargeBody>('POST', `/api/v1/users/me/charges/${id}/${action}`, { headers: { 'x-user-key': userKey } });

const putPolicy = (userKey: string, policy: unknown) =>
  t.call('PUT', '/api/v1/users/me/policy', { headers: { 'x-user-key': userKey }, body: policy });

/** The event of `type` about object `id`. */
/** An answer as an event's data shows it: without its receipt links (`receiptUrl`, `refundReceiptUrl`). */
const withoutLinks = (body: object): Record<string, unknown> =>
  Object.fromEntries(Object.entries(body).filter(([name]) => name !== 'receiptUrl' && name !== 'refundReceiptUrl'));
const about = (type: string, id: string) => (r: Received) => eventOf(r).type === type && eventOf(r).data.id === id;

/**
 * That `types` are all the events about `id` this endpoint will ever be sent, each once, from the
 * service's records rather than a wait: the outbox holds exactly these for the owner about `id` (an
 * event is written with its change, so one more would be there already), and each has reached the
 * endpoint at its first attempt, after which the delivery worker counts, and so sends, no other
 * (test/webhooks/delivery-records.ts); nor has it begun delivering any other event there.
 */
async function expectEachDeliveredOnce(webhookId: string, owner: string, id: string, types: string[]): Promise<void> {
  const events = await outboxAbout(owner, id);
  expect(events.map(([type]) => type).sort()).toEqual([...types].sort());
  const ids = events.map(([, eventId]) => eventId);
  expect(await finalAttempts(webhookId, ids)).toEqual(Object.fromEntries(ids.map((eventId) => [eventId, 1])));
}

/** Events about `id` received so far, by type. */
const typesAbout = (rx: Receiver, id: string) =>
  rx.received
    .map(eventOf)
    .filter((e) => e.data.id === id)
    .map((e) => e.type);

describe('a dispatcher that dies', () => {
  it("after reading a charge's stream record, before enqueueing and then after: each event reaches each endpoint once, under one id", async () => {
    const { agent, user, agentHook, userHook } = await parties();
    // The first dispatch of the charge's record dies before its messages reach the queue; the
    // stream hands the record again, and that dispatch dies after enqueueing, before the stream
    // could move on; the third goes through. Three dispatches of one record, two of them enqueued.
    let sends = 0;
    const name = 'dispatcher-dies';
    webhookSqs().middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'SendMessageBatchCommand') return next(args);
        sends += 1;
        if (sends === 1) throw new Error('injected crash: the dispatcher died before enqueueing');
        const out = await next(args);
        if (sends === 2) throw new Error('injected crash: the dispatcher died after enqueueing');
        return out;
      },
      { step: 'initialize', name },
    );
    try {
      const res = await charge(agent.key, user.key, 'dies-1', { amount: 3 });
      expect(res.status).toBe(201);
      await Promise.all([
        agentRx.waitFor(about('charge.succeeded', res.body.id), 10_000),
        userRx.waitFor(about('charge.succeeded', res.body.id), 10_000),
      ]);
      // The third dispatch enqueues the same events again (same ids); the worker drains them unsent.
      await eventually('the third dispatch of the record', () => sends >= 3);
      await deliveryQueueDrained(t);
      await expectEachDeliveredOnce(agentHook.id, `agent#${agent.id}`, res.body.id, ['charge.succeeded']);
      await expectEachDeliveredOnce(userHook.id, `user#${user.id}`, res.body.id, ['charge.succeeded']);
      for (const rx of [agentRx, userRx]) {
        const got = rx.received.filter(about('charge.succeeded', res.body.id));
        expect(got).toHaveLength(1);
        expect(got[0]?.headers['webhook-id']).toBe(eventOf(got[0] as Received).id);
      }
    } finally {
      webhookSqs().middlewareStack.remove(name);
    }
  });
});

describe('charge events', () => {
  it('charge.succeeded reaches the agent and the user within 2 s of the 201, signed; a replay sends nothing more', async () => {
    const { agent, user, agentHook, userHook } = await parties();
    const res = await charge(agent.key, user.key, 'ok-1', { amount: 12.5 });
    const answeredAt = Date.now();
    expect(res.status).toBe(201);
    const [toAgent, toUser] = await Promise.all([
      agentRx.waitFor(about('charge.succeeded', res.body.id), 2_000),
      userRx.waitFor(about('charge.succeeded', res.body.id), 2_000),
    ]);
    expect(Math.max(toAgent.at, toUser.at) - answeredAt).toBeLessThan(2_000);
    // Verified as a receiver would, each with its own endpoint's secret.
    new Webhook(agentHook.secret).verify(toAgent.body, toAgent.headers as Record<string, string>);
    new Webhook(userHook.secret).verify(toUser.body, toUser.headers as Record<string, string>);
    // The agent gets the Charge as its API shows it; the user, as the user's history shows it;
    // less the receipt link: an event carries the signed receipt itself (docs/receipts.md).
    expect(eventOf(toAgent).data).toEqual(withoutLinks(res.body));
    expect(eventOf(toUser).data).toEqual({ ...withoutLinks(res.body), agent: { id: agent.id, name: expect.any(String) } });
    const history = await t.call<{ data: Record<string, unknown>[] }>('GET', '/api/v1/users/me/charges', {
      headers: { 'x-user-key': user.key },
    });
    expect(history.body.data.map(withoutLinks)).toContainEqual(eventOf(toUser).data);

    const replay = await charge(agent.key, user.key, 'ok-1', { amount: 12.5 });
    expect([replay.status, replay.text]).toEqual([201, res.text]);
    await expectEachDeliveredOnce(agentHook.id, `agent#${agent.id}`, res.body.id, ['charge.succeeded']);
    await expectEachDeliveredOnce(userHook.id, `user#${user.id}`, res.body.id, ['charge.succeeded']);
    expect(typesAbout(agentRx, res.body.id)).toEqual(['charge.succeeded']);
    expect(typesAbout(userRx, res.body.id)).toEqual(['charge.succeeded']);
  });

  it('a refused charge (402) is charge.failed to both, with its reason', async () => {
    const { agent, user } = await parties({ USD: 1 });
    const res = await charge(agent.key, user.key, 'too-much', { amount: 5 });
    expect([res.status, res.body]).toEqual([402, { error: 'insufficient balance' }]);
    const toAgent = await agentRx.waitFor((r) => eventOf(r).type === 'charge.failed', 3_000);
    expect(eventOf(toAgent).data).toMatchObject({ status: 'FAILED', failureReason: 'insufficient balance', amount: 5 });
    const toUser = await userRx.waitFor((r) => eventOf(r).type === 'charge.failed', 3_000);
    expect(eventOf(toUser).data).toMatchObject({ id: eventOf(toAgent).data.id, agent: { id: agent.id } });
  });
});

describe('approvals', () => {
  it('charge.approval_requested brings the user a working approval link whose token is stored nowhere; approve → succeeded to both', async () => {
    const { agent, user, userHook } = await parties();
    await putPolicy(user.key, { approvalAbove: { USD: 10 } });
    const res = await charge(agent.key, user.key, 'big', { amount: 15 });
    expect(res.status).toBe(202);
    const approvalUrl = res.body.approvalUrl ?? '';
    const token = approvalUrl.split('/approve/')[1] ?? '';
    expect(token).toMatch(/\.[A-Za-z0-9_-]{43}$/);

    const pending = await agentRx.waitFor(about('charge.pending', res.body.id), 3_000);
    expect(eventOf(pending).data).toMatchObject({ status: 'PENDING', pendingReason: 'user_approval' });
    expect(pending.body).not.toContain(token);
    const asked = await userRx.waitFor(about('charge.approval_requested', res.body.id), 3_000);
    new Webhook(userHook.secret).verify(asked.body, asked.headers as Record<string, string>);
    expect(eventOf(asked).data).toMatchObject({ status: 'PENDING', approvalUrl, agent: { id: agent.id } });
    // The link works: the approval page shows the charge.
    const page = await fetch(String(eventOf(asked).data.approvalUrl));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('15');

    // The token's MAC is nowhere in the table: not in the outbox item, the idempotency record or the deliveries.
    const mac = token.split('.')[1] ?? '';
    const all = await db().send(new ScanCommand({ TableName: config().TABLE_NAME }));
    const dump = JSON.stringify(all.Items);
    expect(dump).toContain('charge.approval_requested');
    expect(dump).not.toContain(mac);
    const deliveries = await t.call('GET', `/api/v1/users/me/webhooks/${userHook.id}/deliveries`, { headers: { 'x-user-key': user.key } });
    expect(deliveries.text).toContain('charge.approval_requested');
    expect(deliveries.text).not.toContain(mac);

    const approved = await userAct(user.key, res.body.id, 'approve');
    expect([approved.status, approved.body.status]).toEqual([200, 'SUCCESS']);
    const [toAgent, toUser] = await Promise.all([
      agentRx.waitFor(about('charge.succeeded', res.body.id), 3_000),
      userRx.waitFor(about('charge.succeeded', res.body.id), 3_000),
    ]);
    expect(eventOf(toAgent).data).toEqual(withoutLinks(approved.body));
    expect(eventOf(toUser).data).toMatchObject({ status: 'SUCCESS', agent: { id: agent.id } });
  });

  it('decline → charge.failed to both', async () => {
    const { agent, user } = await parties();
    await putPolicy(user.key, { approvalAbove: { USD: 10 } });
    const res = await charge(agent.key, user.key, 'decline-me', { amount: 20 });
    const declined = await userAct(user.key, res.body.id, 'decline');
    expect(declined.body).toMatchObject({ status: 'FAILED', failureReason: 'declined by user' });
    const toAgent = await agentRx.waitFor(about('charge.failed', res.body.id), 3_000);
    expect(eventOf(toAgent).data).toEqual(withoutLinks(declined.body));
    const toUser = await userRx.waitFor(about('charge.failed', res.body.id), 3_000);
    expect(eventOf(toUser).data).toMatchObject({ failureReason: 'declined by user' });
  });

  it('expiry by the sweeper → charge.expired to both', async () => {
    const { agent, user } = await parties();
    await putPolicy(user.key, { approvalAbove: { USD: 10 }, approvalWindowSeconds: 60 });
    const res = await charge(agent.key, user.key, 'expire-me', { amount: 20 });
    const report = await expireDueCharges(new Date(Date.now() + 61_000));
    expect(report.expired).toBeGreaterThanOrEqual(1);
    const toAgent = await agentRx.waitFor(about('charge.expired', res.body.id), 3_000);
    expect(eventOf(toAgent).data).toMatchObject({ status: 'EXPIRED', pendingReason: null, amount: 20 });
    const toUser = await userRx.waitFor(about('charge.expired', res.body.id), 3_000);
    expect(eventOf(toUser).data).toMatchObject({ status: 'EXPIRED', agent: { id: agent.id } });
    const view = await t.call('GET', `/api/v1/agents/charge/${res.body.id}`, { headers: { 'x-agent-key': agent.key } });
    expect(eventOf(toAgent).data).toEqual(withoutLinks(view.body));
  });
});

describe('races', () => {
  it('approve, decline and the sweeper racing: one wins, and each party gets exactly its one event', async () => {
    const { agent, user, agentHook, userHook } = await parties();
    await putPolicy(user.key, { approvalAbove: { USD: 10 }, approvalWindowSeconds: 60 });
    const res = await charge(agent.key, user.key, 'race-me', { amount: 20 });
    await Promise.all([
      userAct(user.key, res.body.id, 'approve'),
      userAct(user.key, res.body.id, 'decline'),
      expireDueCharges(new Date(Date.now() + 61_000)),
    ]);
    const final = await t.call<ChargeBody>('GET', `/api/v1/agents/charge/${res.body.id}`, { headers: { 'x-agent-key': agent.key } });
    const expected = { SUCCESS: 'charge.succeeded', FAILED: 'charge.failed', EXPIRED: 'charge.expired' }[final.body.status] ?? '?';
    const got = await agentRx.waitFor(about(expected, res.body.id), 3_000);
    expect(eventOf(got).data).toEqual(withoutLinks(final.body));
    await userRx.waitFor(about(expected, res.body.id), 3_000);
    // The losers wrote no event, and each event is sent once.
    await expectEachDeliveredOnce(agentHook.id, `agent#${agent.id}`, res.body.id, ['charge.pending', expected]);
    await expectEachDeliveredOnce(userHook.id, `user#${user.id}`, res.body.id, ['charge.approval_requested', expected]);
    // Exactly these, in either order: deliveries are concurrent, so arrival order is not promised
    // (docs/webhooks.md, Ordering); createdAt orders them.
    expect(typesAbout(agentRx, res.body.id).sort()).toEqual(['charge.pending', expected].sort());
    expect(typesAbout(userRx, res.body.id).sort()).toEqual(['charge.approval_requested', expected].sort());
  });
});

describe('holds and refunds', () => {
  it('hold → charge.pending (capture) to the agent; capture → succeeded to both; refund → charge.refunded', async () => {
    const { agent, user, agentHook, userHook } = await parties();
    const hold = await charge(agent.key, user.key, 'hold-1', { amount: 30, capture: false });
    expect([hold.status, hold.body.pendingReason]).toEqual([201, 'capture']);
    const pending = await agentRx.waitFor(about('charge.pending', hold.body.id), 3_000);
    expect(eventOf(pending).data).toEqual(withoutLinks(hold.body));
    const captured = await lifecycle(agent.key, hold.body.id, 'capture', 'cap-1', { amount: 25 });
    expect([captured.status, captured.body.status]).toEqual([200, 'SUCCESS']);
    const succeeded = await agentRx.waitFor(about('charge.succeeded', hold.body.id), 3_000);
    expect(eventOf(succeeded).data).toEqual(withoutLinks(captured.body));
    await userRx.waitFor(about('charge.succeeded', hold.body.id), 3_000);

    const refund = await lifecycle(agent.key, hold.body.id, 'refund', 'ref-1', { amount: 5 });
    expect(refund.status).toBe(200);
    const refunded = await agentRx.waitFor(about('charge.refunded', hold.body.id), 3_000);
    expect(eventOf(refunded).data).toEqual(withoutLinks(refund.body));
    expect(eventOf(refunded).data).toMatchObject({ status: 'SUCCESS', amount: 25, refundedAmount: 5 });
    // A replayed refund writes nothing: no second event.
    expect((await lifecycle(agent.key, hold.body.id, 'refund', 'ref-1', { amount: 5 })).text).toBe(refund.text);
    await expectEachDeliveredOnce(agentHook.id, `agent#${agent.id}`, hold.body.id, [
      'charge.pending',
      'charge.succeeded',
      'charge.refunded',
    ]);
    await expectEachDeliveredOnce(userHook.id, `user#${user.id}`, hold.body.id, ['charge.succeeded']);
    expect(typesAbout(agentRx, hold.body.id)).toEqual(['charge.pending', 'charge.succeeded', 'charge.refunded']);
    // The user hears of the money moving, not of the hold's waiting.
    expect(typesAbout(userRx, hold.body.id)).toEqual(['charge.succeeded']);
  });

  it('release → charge.failed to both', async () => {
    const { agent, user } = await parties();
    const hold = await charge(agent.key, user.key, 'hold-2', { amount: 10, capture: false });
    const released = await lifecycle(agent.key, hold.body.id, 'release', 'rel-1');
    expect(released.body).toMatchObject({ status: 'FAILED', failureReason: 'released by agent' });
    const toAgent = await agentRx.waitFor(about('charge.failed', hold.body.id), 3_000);
    expect(eventOf(toAgent).data).toEqual(withoutLinks(released.body));
    await userRx.waitFor(about('charge.failed', hold.body.id), 3_000);
  });

  it('a hold its payer approves tells the agent charge.pending again, now with pendingReason capture', async () => {
    const { agent, user } = await parties();
    await putPolicy(user.key, { approvalAbove: { USD: 10 } });
    const hold = await charge(agent.key, user.key, 'hold-3', { amount: 40, capture: false });
    expect([hold.status, hold.body.pendingReason]).toEqual([202, 'user_approval']);
    await userRx.waitFor(about('charge.approval_requested', hold.body.id), 3_000);
    const approved = await userAct(user.key, hold.body.id, 'approve');
    expect(approved.body).toMatchObject({ status: 'PENDING', pendingReason: 'capture' });
    const again = await agentRx.waitFor(
      (r) => about('charge.pending', hold.body.id)(r) && eventOf(r).data.pendingReason === 'capture',
      3_000,
    );
    expect(eventOf(again).data).toEqual(withoutLinks(approved.body));
    expect(typesAbout(agentRx, hold.body.id)).toEqual(['charge.pending', 'charge.pending']);
  });
});

describe('top-up events', () => {
  it('a completed top-up is topup.completed to the user, the top-up as the API shows it', async () => {
    const { user } = await parties({});
    const opened = await openTopup(t, user.key, '{"currency":"USD","amount":25}');
    expect(opened.status).toBe(201);
    const topup: TopupBody = opened.body;
    // The payer approves on PayPal's (imitation's) page; its webhook captures and credits.
    const page = await fetch(topup.approveUrl ?? '');
    const action = /action="([^"]+\/approve)"/.exec(await page.text())?.[1] ?? '';
    const pressed = await fetch(new URL(topup.approveUrl ?? '').origin + action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'funding=ok',
      redirect: 'manual',
    });
    expect(pressed.status).toBe(200);
    const got = await userRx.waitFor(about('topup.completed', topup.id), 5_000);
    const after = await getTopup(t, user.key, topup.id);
    expect(after.body.status).toBe('COMPLETED');
    expect(eventOf(got).data).toEqual(withoutLinks(after.body));
  });
});
