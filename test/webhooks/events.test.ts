/** Which events each state change produces, their ids and envelopes (core/events.ts, use-cases/events/events.ts). */

import { marshall } from '@aws-sdk/util-dynamodb';
import type { Charge } from '../../functions/core/charges';
import {
  chargeCreationEventId,
  chargeEventPlan,
  chargeRecordCarriesEvents,
  derivedEventId,
  EVENT_ID_PATTERN,
  newEventId,
  ownerKey,
  parseOwnerKey,
} from '../../functions/core/events';
import type { Payout } from '../../functions/core/payouts';
import { DEFAULT_RETRY_SCHEDULE_SECONDS, maxAttempts, newWebhookSecret, retryDelaySeconds } from '../../functions/core/webhooks';
import { eventBody, outboxPut, storedEvents } from '../../functions/store/events/outbox';
import { keys } from '../../functions/store/table';
import {
  approvalToken,
  eventWithApprovalToken,
  TOKEN_PLACEHOLDER,
  withApprovalToken,
} from '../../functions/use-cases/charges/approval-token';
import { chargeEvents, payoutEvents, settlementEvents } from '../../functions/use-cases/events/events';
import { type ChangeRecord, eventsOf } from '../../functions/webhooks/dispatcher';

const present = <T>(value: T | undefined): T => {
  if (value === undefined) throw new Error('expected a value');
  return value;
};

const charge: Charge = {
  id: 'c01jhx3k6v1f8q2n7c9m4p5r6s7',
  agentId: 'a01jhx3k6v1f8q2n7c9m4p5r6s7',
  userId: 'u01jhx3k6v1f8q2n7c9m4p5r6s7',
  idempotencyKey: 'k1',
  amount: 150,
  currency: 'USD',
  description: 'forecast',
  status: 'SUCCESS',
  createdAt: '2026-01-15T09:30:00.000Z',
  agentName: 'Forecaster',
};

describe('chargeEventPlan', () => {
  it('tells the agent and the user when a charge succeeds, fails or expires', () => {
    expect(chargeEventPlan({ status: 'SUCCESS' })).toEqual([
      { to: 'agent', type: 'charge.succeeded' },
      { to: 'user', type: 'charge.succeeded' },
    ]);
    expect(chargeEventPlan({ status: 'FAILED' }, 'PENDING').map((e) => e.type)).toEqual(['charge.failed', 'charge.failed']);
    expect(chargeEventPlan({ status: 'EXPIRED' }, 'PENDING').map((e) => e.to)).toEqual(['agent', 'user']);
  });

  it('asks the user for approval only for a charge waiting on them, not for a hold', () => {
    expect(chargeEventPlan({ status: 'PENDING', pendingReason: 'user_approval' })).toEqual([
      { to: 'agent', type: 'charge.pending' },
      { to: 'user', type: 'charge.approval_requested' },
    ]);
    expect(chargeEventPlan({ status: 'PENDING', pendingReason: 'capture' })).toEqual([{ to: 'agent', type: 'charge.pending' }]);
  });

  it('produces nothing when the status did not change', () => {
    expect(chargeEventPlan({ status: 'SUCCESS' }, 'SUCCESS')).toEqual([]);
  });
});

describe('event builders', () => {
  it('renders agent events as the agent API shows the charge, user events with the agent and the approval link', () => {
    const pending = {
      ...charge,
      status: 'PENDING' as const,
      pendingReason: 'user_approval' as const,
      expiresAt: '2026-01-15T09:45:00.000Z',
    };
    const [agentEvent, userEvent] = chargeEvents(pending, { approvalUrl: 'https://api.example.com/approve/x' });
    expect(agentEvent?.owner).toEqual({ kind: 'agent', id: charge.agentId });
    expect(JSON.parse(eventBody(present(agentEvent))).data).toMatchObject({ id: charge.id, amount: 1.5, status: 'PENDING' });
    expect(userEvent?.owner).toEqual({ kind: 'user', id: charge.userId });
    expect(JSON.parse(eventBody(present(userEvent))).data).toMatchObject({
      agent: { id: charge.agentId, name: 'Forecaster' },
      approvalUrl: 'https://api.example.com/approve/x',
    });
  });

  it('writes exact decimal amounts into the body', () => {
    const payout: Payout = {
      id: 'p01jhx3k6v1f8q2n7c9m4p5r6s7',
      agentId: charge.agentId,
      currency: 'USDC',
      status: 'COMPLETED',
      network: 'SOL',
      walletAddress: 'w',
      amount: 10_000_000,
      fee: 300_000,
      accountCreationFee: 0,
      netAmount: 9_700_000,
      idempotencyKey: 'k',
      createdAt: charge.createdAt,
      updatedAt: charge.createdAt,
      attempts: 1,
    };
    const [event] = payoutEvents(payout);
    expect(event?.type).toBe('payout.completed');
    expect(eventBody(present(event))).toContain('"amount":10,"fee":0.3,"netAmount":9.7');
    expect(payoutEvents({ ...payout, status: 'PROCESSING' })).toEqual([]);
  });

  it('puts all events of one change in ONE outbox item, bodies exactly {id, type, createdAt, data}', () => {
    const events = chargeEvents(charge);
    const put = outboxPut(events, new Date('2026-01-15T09:30:00.000Z'));
    expect(put?.Put?.Item?.PK).toBe(`OUTBOX#${events[0]?.id}`);
    const stored = storedEvents(put?.Put?.Item ?? {});
    expect(stored.map((e) => e.owner)).toEqual([`agent#${charge.agentId}`, `user#${charge.userId}`]);
    for (const e of stored) expect(Object.keys(JSON.parse(e.body))).toEqual(['id', 'type', 'createdAt', 'data']);
    expect(outboxPut([])).toBeUndefined();
  });
});

describe("a new charge's events from its own INSERT stream record (no outbox item)", () => {
  /** The INSERT record of the charge item as store/charges/charge.repository.ts writes it. */
  const insertOf = (c: Charge): ChangeRecord => ({
    eventID: 'record-1',
    eventName: 'INSERT',
    dynamodb: {
      NewImage: marshall(
        {
          ...keys.charge(c.agentId, c.id),
          ...keys.chargeIndex(c.id),
          ...keys.userChargeIndex(c.userId, c.id),
          type: 'Charge',
          ...c,
          counted: { day: '2026-01-15', month: '2026-01', agent: false },
        },
        { removeUndefinedValues: true },
      ) as Record<string, unknown>,
    },
  });
  const hold: Charge = {
    ...charge,
    status: 'PENDING',
    pendingReason: 'capture',
    expiresAt: '2026-01-22T09:30:00.000Z',
    holdSeconds: 604_800,
    authorizedAmount: 150,
  };
  const failed: Charge = { ...charge, status: 'FAILED', failureReason: 'insufficient balance' };
  const granted: Charge = { ...charge, grantId: 'g01jhx3k6v1f8q2n7c9m4p5r6s7', description: 'd'.repeat(255), agentName: undefined };

  it.each([
    ['SUCCESS', charge],
    ['FAILED', failed],
    ['PENDING (a hold)', hold],
    ['with a grant, no agent name', granted],
  ])('%s: the dispatcher sends exactly the ids, owners and bytes the commit made', (_, c) => {
    const committed = chargeEvents(c, { now: new Date(c.createdAt) }).map((e) => ({
      id: e.id,
      type: e.type,
      createdAt: e.createdAt,
      owner: ownerKey(e.owner),
      body: eventBody(e),
    }));
    expect(committed.length).toBeGreaterThan(0);
    expect(eventsOf(insertOf(c))).toEqual(committed);
    // A re-delivered record (another stream record id, later) makes the same ids and bodies.
    expect(eventsOf({ ...insertOf(c), eventID: 'record-2' })).toEqual(committed);
    for (const e of committed) expect(e.id).toMatch(EVENT_ID_PATTERN);
  });

  it('gives each event of a charge its own id, dated by the charge', () => {
    const [agentEvent, userEvent] = chargeEvents(charge);
    expect(agentEvent?.id).not.toBe(userEvent?.id);
    expect(agentEvent?.id).toBe(chargeCreationEventId(charge.id, 'charge.succeeded', 'agent', charge.createdAt));
    expect(agentEvent?.createdAt).toBe(charge.createdAt);
  });

  it('derives nothing for a charge that asks its payer for approval: its link is in its outbox item', () => {
    const asking: Charge = { ...charge, status: 'PENDING', pendingReason: 'user_approval', expiresAt: '2026-01-15T10:30:00.000Z' };
    expect(chargeRecordCarriesEvents(asking)).toBe(false);
    expect(eventsOf(insertOf(asking))).toEqual([]);
    expect(chargeRecordCarriesEvents(hold)).toBe(true);
  });

  it('derives nothing from a modified charge item', () => {
    expect(eventsOf({ ...insertOf(charge), eventName: 'MODIFY' })).toEqual([]);
  });
});

describe('ids, owners, secrets and the retry schedule', () => {
  it('makes evt_ ids, and the same derived id for the same stream record', () => {
    expect(newEventId()).toMatch(EVENT_ID_PATTERN);
    const at = new Date('2026-01-15T09:30:00.000Z');
    expect(derivedEventId('record-1', at)).toBe(derivedEventId('record-1', at));
    expect(derivedEventId('record-1', at)).not.toBe(derivedEventId('record-2', at));
    expect(derivedEventId('record-1', at)).toMatch(EVENT_ID_PATTERN);
  });

  it('parses owner keys strictly', () => {
    expect(parseOwnerKey('agent#a1')).toEqual({ kind: 'agent', id: 'a1' });
    expect(parseOwnerKey('admin#x')).toBeUndefined();
    expect(parseOwnerKey('user#u#x')).toBeUndefined();
  });

  it('makes whsec_ secrets of 32 random bytes', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
  });

  it('retries with growing delays for more than 24 hours, then stops', () => {
    const total = DEFAULT_RETRY_SCHEDULE_SECONDS.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(24 * 3600);
    for (let i = 1; i < DEFAULT_RETRY_SCHEDULE_SECONDS.length; i++) {
      expect(DEFAULT_RETRY_SCHEDULE_SECONDS[i]).toBeGreaterThanOrEqual(DEFAULT_RETRY_SCHEDULE_SECONDS[i - 1] ?? 0);
    }
    // SQS allows at most 12 h per visibility change.
    expect(Math.max(...DEFAULT_RETRY_SCHEDULE_SECONDS)).toBeLessThanOrEqual(43_200);
    expect(maxAttempts(DEFAULT_RETRY_SCHEDULE_SECONDS)).toBe(8);
    expect(retryDelaySeconds(DEFAULT_RETRY_SCHEDULE_SECONDS, 1)).toBe(5);
    expect(retryDelaySeconds(DEFAULT_RETRY_SCHEDULE_SECONDS, 8)).toBeUndefined();
  });
});

describe('settlement events (issue 14 phase 2)', () => {
  const now = new Date('2026-01-15T09:40:00.000Z');
  const awaiting: Charge = {
    ...charge,
    status: 'PENDING',
    pendingReason: 'user_approval',
    expiresAt: '2026-01-15T09:45:00.000Z',
  };
  const hold: Charge = { ...awaiting, pendingReason: 'capture', holdSeconds: 600, authorizedAmount: 150 };
  const typesOf = (events: ReturnType<typeof settlementEvents>) => events.map((e) => `${e.owner.kind}:${e.type}`);
  const dataOf = (events: ReturnType<typeof settlementEvents>, i = 0) => JSON.parse(eventBody(present(events[i]))).data;

  it('approve → succeeded, decline → failed, expiry → expired, to the agent and the user', () => {
    expect(typesOf(settlementEvents(awaiting, { kind: 'approve' }, now))).toEqual(['agent:charge.succeeded', 'user:charge.succeeded']);
    const declined = settlementEvents(awaiting, { kind: 'return', status: 'FAILED', failureReason: 'declined by user' }, now);
    expect(typesOf(declined)).toEqual(['agent:charge.failed', 'user:charge.failed']);
    expect(dataOf(declined)).toMatchObject({ status: 'FAILED', failureReason: 'declined by user', pendingReason: null });
    const expired = settlementEvents(awaiting, { kind: 'return', status: 'EXPIRED', failureReason: null }, now);
    expect(typesOf(expired)).toEqual(['agent:charge.expired', 'user:charge.expired']);
  });

  it('capture → succeeded with the captured amount and what was authorized', () => {
    const events = settlementEvents(hold, { kind: 'capture', amount: 100 }, now);
    expect(typesOf(events)).toEqual(['agent:charge.succeeded', 'user:charge.succeeded']);
    expect(dataOf(events)).toMatchObject({ status: 'SUCCESS', amount: 1, authorizedAmount: 1.5, pendingReason: null });
  });

  it('a hold its payer approves: charge.pending to the agent only, now waiting for the capture', () => {
    const approvedHold = { ...hold, pendingReason: 'user_approval' as const };
    const events = settlementEvents(approvedHold, { kind: 'approve' }, now);
    expect(typesOf(events)).toEqual(['agent:charge.pending']);
    expect(dataOf(events)).toMatchObject({ status: 'PENDING', pendingReason: 'capture', expiresAt: '2026-01-15T09:50:00.000Z' });
    expect(chargeEventPlan({ status: 'PENDING', pendingReason: 'capture' }, 'PENDING', 'capture')).toEqual([]);
  });
});

describe('the approval link in charge.approval_requested', () => {
  const pending: Charge = {
    ...charge,
    status: 'PENDING',
    pendingReason: 'user_approval',
    expiresAt: '2026-01-15T09:45:00.000Z',
    // A description that happens to contain the placeholder's text is left as it is.
    description: `pay ${TOKEN_PLACEHOLDER} now`,
  };

  it('is stored with the placeholder and filled in at delivery, only in approvalUrl', async () => {
    const events = chargeEvents(pending, { approvalUrl: `https://api.example.com/approve/${TOKEN_PLACEHOLDER}` });
    const asked = present(events.find((e) => e.type === 'charge.approval_requested'));
    const stored = eventBody(asked);
    const token = await approvalToken(charge.id);
    expect(stored).not.toContain(token);
    const sent = await eventWithApprovalToken('charge.approval_requested', stored);
    expect(JSON.parse(sent).data).toMatchObject({
      approvalUrl: `https://api.example.com/approve/${token}`,
      description: `pay ${TOKEN_PLACEHOLDER} now`,
    });
    // Other events go out exactly as stored.
    const agentBody = eventBody(present(events.find((e) => e.type === 'charge.pending')));
    expect(await eventWithApprovalToken('charge.pending', agentBody)).toBe(agentBody);
  });

  it('the idempotency replay fills in the link, not the description', async () => {
    const stored = JSON.stringify({
      id: charge.id,
      description: `x ${TOKEN_PLACEHOLDER}`,
      approvalUrl: `https://h/approve/${TOKEN_PLACEHOLDER}`,
    });
    const replay = JSON.parse(await withApprovalToken(stored));
    expect(replay).toEqual({
      id: charge.id,
      description: `x ${TOKEN_PLACEHOLDER}`,
      approvalUrl: `https://h/approve/${await approvalToken(charge.id)}`,
    });
  });
});
