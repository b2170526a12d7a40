/**
 * Webhook events (DESIGN §15): the event types each kind of owner can subscribe to, the event
 * envelope `{id, type, createdAt, data}`, and which events a state change produces. Pure: the
 * outbox (store/events/outbox.ts) writes what these return in the same transaction as the change, the
 * dispatcher and delivery worker (functions/webhooks) send it. See docs/webhooks.md.
 */
import { createHash } from 'node:crypto';
import { monotonicFactory } from 'ulid';
import type { Charge } from './charges';

/** Who owns webhook endpoints and receives events. */
export type OwnerKind = 'agent' | 'user';
export interface Owner {
  kind: OwnerKind;
  id: string;
}

export const AGENT_EVENT_TYPES = [
  'charge.succeeded',
  'charge.failed',
  'charge.pending',
  'charge.expired',
  'charge.refunded',
  'payout.completed',
  'payout.failed',
  'agent.enabled',
  'agent.disabled',
  'grant.approved',
  'grant.revoked',
  'x402.payment.settled',
  'x402.purchase.succeeded',
  'x402.purchase.expired',
  'x402.payment.refunded',
  'tab.closed',
] as const;
export const USER_EVENT_TYPES = [
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
  'grant.limit.approaching',
  'grant.limit.reached',
  'tab.closed',
] as const;
export type AgentEventType = (typeof AGENT_EVENT_TYPES)[number];
export type UserEventType = (typeof USER_EVENT_TYPES)[number];
/** `ping` is sent only by the test endpoint, to the one endpoint tested; nobody subscribes to it. */
export type EventType = AgentEventType | UserEventType | 'ping';

export const EVENT_TYPES_BY_OWNER: Readonly<Record<OwnerKind, readonly string[]>> = {
  agent: AGENT_EVENT_TYPES,
  user: USER_EVENT_TYPES,
};

/** One event for one owner, as written to the outbox. `data` is the public JSON of the object. */
export interface OutboxEvent {
  id: string;
  type: EventType;
  createdAt: string;
  owner: Owner;
  data: unknown;
  /** Only this endpoint (a `ping`); otherwise every endpoint of the owner subscribed to `type`. */
  webhookId?: string;
}

const ulid = monotonicFactory();
export const EVENT_ID_PATTERN = /^evt_[0-9a-z]{26}$/;
/** A new event id: `evt_` + a lower-case ULID (creation order). */
export const newEventId = (now?: Date): string => `evt_${ulid(now?.getTime()).toLowerCase()}`;

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * A deterministic event id for an event derived from a stream record (agent.enabled/disabled from
 * the agent item's old and new image): the ULID time of the change and 80 bits of a hash of the
 * record's unique id, so a stream batch processed twice yields the same `webhook-id` twice.
 */
export function derivedEventId(seed: string, at: Date): string {
  let time = '';
  let ms = Math.max(0, Math.floor(at.getTime()));
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[ms % 32] + time;
    ms = Math.floor(ms / 32);
  }
  const digest = createHash('sha256').update(seed).digest();
  let random = '';
  for (let i = 0; i < 16; i++) random += CROCKFORD[(digest[i] ?? 0) % 32];
  return `evt_${time}${random}`;
}

/**
 * Whether a new charge's own INSERT stream record is the outbox of its creation events: the
 * dispatcher derives them from the charge item (functions/webhooks/dispatcher.ts), so the charge's
 * transaction writes no outbox item. All but the approval request: its link is made from the
 * request's base URL, which the charge item does not hold, so that charge keeps an outbox item.
 */
export const chargeRecordCarriesEvents = (charge: Pick<Charge, 'status' | 'pendingReason'>): boolean =>
  !(charge.status === 'PENDING' && charge.pendingReason === 'user_approval');

/**
 * The id of one of a new charge's events: the same for the same charge, type and owner, however
 * often it is derived (a re-delivered stream record, the outbox of the approval case alike), with
 * the charge's creation time as its ULID time, so ids still sort in creation order.
 */
export const chargeCreationEventId = (chargeId: string, type: string, to: OwnerKind, createdAt: string): string =>
  derivedEventId(`charge-created|${chargeId}|${type}|${to}`, new Date(createdAt));

export const ownerKey = (owner: Owner): string => `${owner.kind}#${owner.id}`;

export function parseOwnerKey(key: string): Owner | undefined {
  const [kind, id, ...rest] = key.split('#');
  if (rest.length > 0 || !id || (kind !== 'agent' && kind !== 'user')) return undefined;
  return { kind, id };
}

/** Whether `type` is an event type this kind of owner can subscribe to. */
export const isEventTypeFor = (kind: OwnerKind, type: string): boolean => EVENT_TYPES_BY_OWNER[kind].includes(type);

/** An event as the receiver gets it: exactly these four fields (DESIGN §15). */
export const eventEnvelope = (event: OutboxEvent) => ({ id: event.id, type: event.type, createdAt: event.createdAt, data: event.data });

/** Which events a charge's state produces, for whom (agent: the charging agent, user: the payer). */
export interface PlannedEvent {
  to: OwnerKind;
  type: AgentEventType | UserEventType;
}

/**
 * The events a charge produces on reaching its current state. `previous` is the status it left
 * (undefined when the charge was just created). A charge created PENDING waiting for its payer's
 * approval also asks the user (`charge.approval_requested`); a hold waiting for capture tells only
 * the agent. Status names the charge code may add later (phase 2, issue 11) map here, one line each.
 * `previousReason`: the pendingReason it left; a hold moving from `user_approval` to `capture`
 * (approved by its payer) tells the agent `charge.pending` again, now with pendingReason capture.
 */
export function chargeEventPlan(
  charge: Pick<Charge, 'status' | 'pendingReason'>,
  previous?: string,
  previousReason?: string,
): PlannedEvent[] {
  if (previous === charge.status) {
    // A hold its payer approved now waits for the agent's capture: the agent learns it may capture.
    return charge.status === 'PENDING' && previousReason === 'user_approval' && charge.pendingReason === 'capture'
      ? [{ to: 'agent', type: 'charge.pending' }]
      : [];
  }
  switch (charge.status as string) {
    case 'PENDING':
      return charge.pendingReason === 'user_approval'
        ? [
            { to: 'agent', type: 'charge.pending' },
            { to: 'user', type: 'charge.approval_requested' },
          ]
        : [{ to: 'agent', type: 'charge.pending' }];
    case 'SUCCESS':
    case 'CAPTURED':
      return [
        { to: 'agent', type: 'charge.succeeded' },
        { to: 'user', type: 'charge.succeeded' },
      ];
    case 'FAILED':
    case 'RELEASED':
    case 'CANCELED':
      return [
        { to: 'agent', type: 'charge.failed' },
        { to: 'user', type: 'charge.failed' },
      ];
    case 'EXPIRED':
      return [
        { to: 'agent', type: 'charge.expired' },
        { to: 'user', type: 'charge.expired' },
      ];
    case 'REFUNDED':
    case 'PARTIALLY_REFUNDED':
      return [{ to: 'agent', type: 'charge.refunded' }];
    default:
      return [];
  }
}
