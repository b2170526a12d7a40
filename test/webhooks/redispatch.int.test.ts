/**
 * Re-dispatch from the outbox (`npm run admin -- redispatch`, bin/operator/redispatch.ts) against
 * DynamoDB Local, local SQS and a real receiver, with the delivery worker consuming the queue as
 * its event source mapping would: an event the stream dispatcher never handled is delivered once,
 * and one it already delivered is not delivered again (the worker's per (endpoint, event) note).
 * "Nothing else arrived" is read from the delivery records the service keeps, once the queue is
 * empty, not from a sleep.
 */
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { type LocalSqs, type PayoutConsumer, startLocalSqs, startPayoutConsumer } from '../../bin/local/payout-pipeline';
import { createWebhookQueues, type WebhookQueues } from '../../bin/local/webhook-pipeline';
import { runAdmin } from '../../bin/operator/admin-cli';
import { config, resetForTests } from '../../functions/config';
import type { CreatedWebhook } from '../../functions/contracts/webhook-outcome';
import { newEventId, type OutboxEvent } from '../../functions/core/events';
import { newAgentId, newChargeId } from '../../functions/core/ids';
import type { DeliveryMessage } from '../../functions/queue/webhook-queue';
import { toCharge } from '../../functions/store/charges/charge-read.repository';
import { db } from '../../functions/store/client';
import { appendOutbox, eventBody, outboxPut } from '../../functions/store/events/outbox';
import { listDeliveryAttempts } from '../../functions/store/events/webhook-delivery.repository';
import { keys } from '../../functions/store/table';
import { chargeEvents } from '../../functions/use-cases/events/events';
import { createWebhook } from '../../functions/use-cases/events/webhooks';
import { deliverBatch } from '../../functions/webhooks/delivery';
import { dispatchRecords } from '../../functions/webhooks/dispatcher';
import { redispatchOutbox } from '../../functions/webhooks/redispatch';
import { eventually } from '../support/eventually';
import { createTestTable } from '../support/table';
import { eventOf, type Receiver, startReceiver } from './receiver';

let sqs: LocalSqs;
let queues: WebhookQueues;
let consumer: PayoutConsumer;
let receiver: Receiver;
let client: SQSClient;

beforeAll(async () => {
  await createTestTable();
  sqs = await startLocalSqs({ visibilityTimeoutSeconds: 5, maxReceives: 5 });
  queues = await createWebhookQueues(sqs, { visibilityTimeoutSeconds: 5, maxReceives: 20 });
  Object.assign(process.env, {
    SQS_ENDPOINT: sqs.endpoint,
    WEBHOOK_QUEUE_URL: queues.queueUrl,
    WEBHOOK_ALLOW_LOOPBACK: '1',
    WEBHOOK_LOCAL_SECRET_KEY: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
  });
  resetForTests();
  client = new SQSClient({ region: 'us-east-1', endpoint: sqs.endpoint, credentials: { accessKeyId: 'l', secretAccessKey: 'l' } });
  receiver = await startReceiver();
  // The delivery worker on the webhook queue, as its event source mapping runs it.
  consumer = startPayoutConsumer({
    sqs: { ...sqs, queueUrl: queues.queueUrl, queueArn: queues.queueArn, dlqUrl: queues.dlqUrl },
    worker: (event) => deliverBatch(event.Records),
    reconcile: async () => undefined,
    reconcileIntervalMs: 2 ** 30,
  });
});

afterAll(async () => {
  await consumer?.stop();
  await receiver?.stop();
  client?.destroy();
  await sqs?.stop();
  resetForTests();
});

/** Messages still in the delivery queue, visible or being handled. */
async function inQueue(): Promise<number> {
  const out = await client.send(new GetQueueAttributesCommand({ QueueUrl: queues.queueUrl, AttributeNames: ['All'] }));
  return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
}

const queueDrained = () => eventually('an empty delivery queue', async () => (await inQueue()) === 0, { timeoutMs: 15_000 });

async function admin(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(argv, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

const agentId = newAgentId();

function payoutEvent(createdAt: Date): OutboxEvent {
  return {
    id: newEventId(createdAt),
    type: 'payout.completed',
    createdAt: createdAt.toISOString(),
    owner: { kind: 'agent', id: agentId },
    data: { id: `p-${createdAt.getTime()}` },
  };
}

/** The deliveries the service recorded for the endpoint, by event id. */
async function recordedDeliveries(webhookId: string) {
  const attempts = await listDeliveryAttempts(webhookId, 100);
  const byEvent = new Map<string, string[]>();
  for (const a of attempts) byEvent.set(a.eventId, [...(byEvent.get(a.eventId) ?? []), a.status]);
  return byEvent;
}

describe('npm run admin -- redispatch', () => {
  it('delivers an event the dispatcher missed once, and does not deliver an already delivered one again', async () => {
    const created = await createWebhook({ kind: 'agent', id: agentId }, { url: receiver.url, events: ['payout.completed'] });
    const webhookId = (created as CreatedWebhook).webhook.id;
    const t0 = new Date(Date.now() + 1_000);
    const delivered = payoutEvent(t0);
    const missed = payoutEvent(new Date(t0.getTime() + 1_000));

    // Both committed (their outbox items written) ...
    await appendOutbox([delivered], t0);
    await appendOutbox([missed], new Date(t0.getTime() + 1_000));
    // ... but only the first went through the stream dispatcher and reached the receiver.
    const item = outboxPut([delivered], t0)?.Put?.Item ?? {};
    expect(
      await dispatchRecords([{ eventID: 'e1', eventName: 'INSERT', dynamodb: { NewImage: marshall(item), SequenceNumber: '1' } }]),
    ).toBe(undefined);
    await receiver.waitFor((r) => eventOf(r).id === delivered.id);
    await queueDrained();
    expect((await recordedDeliveries(webhookId)).get(delivered.id)).toEqual(['succeeded']);

    // The operator re-dispatches a range holding both.
    const from = new Date(t0.getTime() - 60_000).toISOString();
    const to = new Date(t0.getTime() + 60_000).toISOString();
    const run = await admin('redispatch', '--from', from, '--to', to);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toMatchObject({ from, to, dryRun: false, outboxItems: 2, events: 2, messages: 2 });

    // The missed event arrives, once; then the queue is empty and the records say what happened.
    await receiver.waitFor((r) => eventOf(r).id === missed.id);
    await queueDrained();
    const ids = receiver.received.map((r) => eventOf(r).id);
    expect(ids.filter((id) => id === missed.id)).toHaveLength(1);
    expect(ids.filter((id) => id === delivered.id)).toHaveLength(1);
    const records = await recordedDeliveries(webhookId);
    expect(records.get(missed.id)).toEqual(['succeeded']);
    // The second message for the delivered event was dropped before any attempt: no second record.
    expect(records.get(delivered.id)).toEqual(['succeeded']);
    // The missed event's webhook-id is its event id, as on its first delivery.
    const got = receiver.received.find((r) => eventOf(r).id === missed.id);
    expect(got?.headers['webhook-id']).toBe(missed.id);
  });

  it('--dry-run counts what it would send and sends nothing', async () => {
    const at = new Date(Date.now() + 10 * 60_000);
    await appendOutbox([payoutEvent(at)], at);
    const before = receiver.received.length;
    const run = await admin(
      'redispatch',
      '--from',
      new Date(at.getTime() - 1_000).toISOString(),
      '--to',
      new Date(at.getTime() + 1_000).toISOString(),
      '--dry-run',
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ dryRun: true, outboxItems: 1, events: 1, messages: 1 });
    expect(await inQueue()).toBe(0);
    expect(receiver.received.length).toBe(before);
  });

  it("re-derives a new charge's events from its item (no outbox item), the same ids and bytes; not those of a charge changed since", async () => {
    const created = await createWebhook({ kind: 'agent', id: agentId }, { url: receiver.url, events: ['charge.succeeded'] });
    const webhookId = (created as CreatedWebhook).webhook.id;
    const at = new Date(Date.now() + 20 * 60_000);
    const charge = (id: string, extra: Record<string, unknown> = {}) => ({
      ...keys.charge(agentId, id),
      type: 'Charge',
      id,
      agentId,
      userId: 'u01jhx3k6v1f8q2n7c9m4p5r6s7',
      idempotencyKey: `k-${id}`,
      amount: 125,
      currency: 'USD',
      description: 'redispatched',
      status: 'SUCCESS',
      createdAt: at.toISOString(),
      agentName: 'Forecaster',
      ...extra,
    });
    const fresh = charge(newChargeId(agentId));
    // Refunded since: its creation events cannot be made again as they were (its refund's are in an outbox item).
    const changed = charge(newChargeId(agentId), { status: 'REFUNDED', refundedAmount: 125, refundedAt: at.toISOString() });
    for (const Item of [fresh, changed]) await db().send(new PutCommand({ TableName: config().TABLE_NAME, Item }));
    const sent: DeliveryMessage[] = [];
    const report = await redispatchOutbox({
      from: new Date(at.getTime() - 1_000),
      to: new Date(at.getTime() + 1_000),
      send: async (messages) => {
        sent.push(...messages);
      },
    });
    expect(report).toMatchObject({ outboxItems: 0, chargeItems: 1, events: 2, messages: 1 });
    const [first] = chargeEvents(toCharge(fresh));
    // The same bytes, then the receipt (DESIGN §27): signed again at the re-dispatch, appended as the envelope's last member.
    const sameBytes = first ? eventBody(first).slice(0, -1) : '';
    expect(sent).toEqual([
      {
        webhookId,
        owner: `agent#${agentId}`,
        eventId: first?.id,
        type: 'charge.succeeded',
        body: expect.stringMatching(/"receipt":"[^"]+"}$/),
      },
    ]);
    expect(sent[0]?.body.startsWith(`${sameBytes},"receipt":"`)).toBe(true);
  });

  it('refuses a range without zones or backwards, with exit 2 and its usage', async () => {
    for (const argv of [
      ['redispatch', '--from', '2026-05-01T10:00', '--to', '2026-05-01T11:00Z'],
      ['redispatch', '--from', '2026-05-01T11:00:00Z', '--to', '2026-05-01T10:00:00Z'],
      ['redispatch', '--to', '2026-05-01T10:00:00Z'],
      ['redispatch', '--from', '2026-05-01T10:00:00Z', '--to', '2026-05-01T11:00:00Z', '--bogus'],
    ]) {
      const run = await admin(...argv);
      expect({ argv, code: run.code, usage: run.stderr.includes('usage: npm run admin -- redispatch') }).toEqual({
        argv,
        code: 2,
        usage: true,
      });
    }
    expect(config().TABLE_NAME).toBeTruthy();
  });
});
