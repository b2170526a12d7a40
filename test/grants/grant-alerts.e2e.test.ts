/**
 * Grant limit alerts (DESIGN §27, docs/webhooks.md "Grant limit alerts"), end to end through the
 * table's stream, the dispatcher and the delivery worker to the payer's endpoint:
 * `grant.limit.approaching` once when a charge brings a window to 80% of a limit,
 * `grant.limit.reached` once when a charge is refused by it, and neither again in the same window.
 * The once-per-window marker is tested under concurrency directly: the same crossing asked for by
 * many records at once writes one event.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { db } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { sendGrantAlerts } from '../../functions/use-cases/events/grant-alerts';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { deliveryQueueDrained, outboxEvents } from '../webhooks/delivery-records';
import { eventOf, type Received, type Receiver, startReceiver } from '../webhooks/receiver';

const t = useTestStack(
  { WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,1,1', WEBHOOK_TIMEOUT_MS: '1000' },
  { webhooks: { visibilityTimeoutSeconds: 2, pollIntervalMs: 50 } },
);
let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(async () => rx?.stop());
auditAfterAll();

type Grant = { id: string; key: string };

async function payerWithGrant(limits: Record<string, number>) {
  const agent = await t.enabledAgent();
  const user = await t.fundedUser({ USD: 20 });
  const hook = await t.call('POST', '/api/v1/users/me/webhooks', { headers: { 'x-user-key': user.key }, body: { url: rx.url } });
  expect(hook.status).toBe(201);
  const grant = await t.call<Grant>('POST', '/api/v1/users/me/grants', {
    headers: { 'x-user-key': user.key },
    body: { agentId: agent.id, currency: 'USD', limits },
  });
  expect(grant.status).toBe(201);
  return { agent, user, grant: grant.body };
}

const charge = (agentKey: string, grantKey: string, amount: number) =>
  t.call<{ error?: string }>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': grantKey, 'idempotency-key': randomUUID() },
    body: { amount, currency: 'USD', description: 'alerts' },
  });

const alertAbout = (type: string, grantId: string) => (r: Received) =>
  eventOf(r).type === type && (eventOf(r).data as { grant?: { id?: string } }).grant?.id === grantId;

const alertsInOutbox = async (grantId: string) =>
  (await outboxEvents())
    .filter((e) => e.type.startsWith('grant.limit.') && (e.data.grant as { id?: string } | undefined)?.id === grantId)
    .map((e) => `${e.type} ${String(e.data.limit)}`)
    .sort();

describe('grant limit alerts', () => {
  it('approaching once at 80%, reached once when refused, nothing more in the same window', async () => {
    const { agent, grant } = await payerWithGrant({ daily: 1, total: 10 });
    expect((await charge(agent.key, grant.key, 0.5)).status).toBe(201);
    expect((await charge(agent.key, grant.key, 0.3)).status).toBe(201);
    const approaching = await rx.waitFor(alertAbout('grant.limit.approaching', grant.id), 10_000);
    expect(eventOf(approaching).data).toMatchObject({ limit: 'daily', window: new Date().toISOString().slice(0, 10), spent: 0.8, max: 1 });
    expect((await charge(agent.key, grant.key, 0.1)).status).toBe(201);
    const refused = await charge(agent.key, grant.key, 0.2);
    expect([refused.status, refused.body.error]).toEqual([402, 'spending limit exceeded']);
    const reached = await rx.waitFor(alertAbout('grant.limit.reached', grant.id), 10_000);
    expect(eventOf(reached).data).toMatchObject({ limit: 'daily', spent: 0.9, max: 1 });
    expect(typeof (eventOf(reached).data as { chargeId?: unknown }).chargeId).toBe('string');
    expect((await charge(agent.key, grant.key, 0.2)).status).toBe(402);
    expect((await charge(agent.key, grant.key, 0.05)).status).toBe(201);
    await deliveryQueueDrained(t);
    expect(await alertsInOutbox(grant.id)).toEqual(['grant.limit.approaching daily', 'grant.limit.reached daily']);
  });

  it('concurrent charges crossing 80% together send approaching once', async () => {
    const { agent, grant } = await payerWithGrant({ total: 1 });
    const burst = await Promise.all(Array.from({ length: 12 }, () => charge(agent.key, grant.key, 0.1)));
    expect(burst.filter((r) => r.status === 201)).toHaveLength(10);
    await rx.waitFor(alertAbout('grant.limit.reached', grant.id), 10_000);
    await rx.waitFor(alertAbout('grant.limit.approaching', grant.id), 10_000);
    await deliveryQueueDrained(t);
    expect(await alertsInOutbox(grant.id)).toEqual(['grant.limit.approaching total', 'grant.limit.reached total']);
  });

  it('the marker lets exactly one of many identical crossings through (redelivered or racing records)', async () => {
    const { user, grant } = await payerWithGrant({ hourly: 1 });
    const { Item } = await db().send(
      new GetCommand({ TableName: config().TABLE_NAME, Key: keys.grant(user.id, grant.id), ConsistentRead: true }),
    );
    const old = { ...Item };
    const hour = new Date().toISOString().slice(0, 13);
    const item = { ...Item, spent: 90, spentHour: { p: hour, v: 90 } };
    const sent = await Promise.all(Array.from({ length: 8 }, () => sendGrantAlerts({ eventName: 'MODIFY', item, old })));
    expect(sent.reduce((a, b) => a + b, 0)).toBe(1);
    // A give-back and a second crossing in the same hour: still that one.
    expect(await sendGrantAlerts({ eventName: 'MODIFY', item, old: { ...item, spentHour: { p: hour, v: 10 } } })).toBe(0);
  });
});
