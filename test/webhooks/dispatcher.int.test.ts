/**
 * The dispatcher against DynamoDB Local, fed stream records as Lambda would hand them: fan-out to
 * subscribed endpoints, agent flips from old/new images, deterministic ids, and a failure that
 * stops the batch at its record (the stream then retries from there).
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import { newEventId, type OutboxEvent } from '../../functions/core/events';
import { newWebhookId } from '../../functions/core/webhooks';
import type { DeliveryMessage } from '../../functions/queue/webhook-queue';
import { outboxPut } from '../../functions/store/events/outbox';
import { createWebhook } from '../../functions/store/events/webhook.repository';
import { type ChangeRecord, dispatchRecords, eventsOf } from '../../functions/webhooks/dispatcher';
import { createTestTable } from '../support/table';

beforeAll(async () => {
  await createTestTable();
});

const agentId = 'a01jhx3k6v1f8q2n7c9m4p5r6s7';
const owner = `agent#${agentId}`;
let seq = 0;

function outboxRecord(events: OutboxEvent[]): ChangeRecord {
  const item = outboxPut(events)?.Put?.Item ?? {};
  return { eventID: `e${++seq}`, eventName: 'INSERT', dynamodb: { NewImage: marshall(item), SequenceNumber: String(seq) } };
}

function payoutEvent(createdAt: string): OutboxEvent {
  return { id: newEventId(), type: 'payout.completed', createdAt, owner: { kind: 'agent', id: agentId }, data: { id: 'p1' } };
}

async function endpoint(events: string[], createdAt: string) {
  const id = newWebhookId();
  await createWebhook({ id, owner, url: 'http://127.0.0.1:9/x', events, createdAt, sealedSecret: 'x' });
  return id;
}

describe('dispatchRecords', () => {
  it('sends one message per subscribed endpoint registered before the event, and stops at a failure', async () => {
    const subscribed = await endpoint(['payout.completed'], '2026-01-01T00:00:00.000Z');
    await endpoint(['payout.failed'], '2026-01-01T00:00:00.000Z');
    await endpoint(['payout.completed'], '2026-06-01T00:00:00.000Z'); // registered after the event
    const first = outboxRecord([payoutEvent('2026-02-01T00:00:00.000Z')]);
    const second = outboxRecord([payoutEvent('2026-02-01T00:00:01.000Z')]);
    const sent: DeliveryMessage[][] = [];
    let fail = true;
    const send = async (messages: readonly DeliveryMessage[]) => {
      if (fail) {
        fail = false;
        throw new Error('SQS unavailable');
      }
      sent.push([...messages]);
    };
    // The first record fails: the batch stops there, and reports it.
    expect(await dispatchRecords([first, second], { send })).toBe(first.dynamodb?.SequenceNumber);
    expect(sent).toEqual([]);
    // The stream hands the batch again from that record.
    expect(await dispatchRecords([first, second], { send })).toBeUndefined();
    expect(sent.map((batch) => batch.map((m) => m.webhookId))).toEqual([[subscribed], [subscribed]]);
    expect(JSON.parse(sent[0]?.[0]?.body ?? '{}')).toMatchObject({ type: 'payout.completed', data: { id: 'p1' } });
  });

  it('derives agent.enabled/disabled from old and new images, with the same id for the same record', () => {
    const image = (enabled: boolean, extra: Record<string, unknown> = {}) =>
      marshall({
        PK: 'AGENTKEY#h',
        SK: 'AGENT',
        type: 'Agent',
        agentId,
        name: 'n',
        email: 'e',
        website: 'w',
        enabled,
        createdAt: 'c',
        ...extra,
      });
    const flip: ChangeRecord = {
      eventID: 'rec-1',
      eventName: 'MODIFY',
      dynamodb: { ApproximateCreationDateTime: 1_767_225_600, OldImage: image(true), NewImage: image(false) },
    };
    const [event] = eventsOf(flip);
    expect(event).toMatchObject({ type: 'agent.disabled', owner, roughTime: true });
    expect(eventsOf(flip)[0]?.id).toBe(event?.id);
    // The admin route stamps the change: that time dates the event.
    const stamped = {
      ...flip,
      dynamodb: { ...flip.dynamodb, NewImage: image(true, { enabledChangedAt: '2026-03-01T00:00:00.000Z' }), OldImage: image(false) },
    };
    expect(eventsOf(stamped)[0]).toMatchObject({ type: 'agent.enabled', createdAt: '2026-03-01T00:00:00.000Z' });
    expect(eventsOf(stamped)[0]?.roughTime).toBeUndefined();
    // Other changes to the agent item, and key rotation (a new item), report nothing.
    expect(eventsOf({ ...flip, dynamodb: { ...flip.dynamodb, NewImage: image(true), OldImage: image(true) } })).toEqual([]);
    expect(eventsOf({ eventName: 'INSERT', dynamodb: { NewImage: image(true) } })).toEqual([]);
  });
});
