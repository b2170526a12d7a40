/**
 * The webhook events of each state change, with their data rendered as the API shows the object
 * (contracts/views.ts). Pure: a use case builds them and hands them to the repository that commits the
 * change, which appends `outboxPut(events)` (store/events/outbox.ts) to the change's transaction.
 * Which events a charge state produces is decided in core/events.ts (`chargeEventPlan`).
 */

import { agentView, chargeView, payoutView, userChargeView } from '../../contracts/views';
import { x402RefundView } from '../../contracts/x402-refund';
import type { Agent } from '../../core/agents';
import type { Charge } from '../../core/charges';
import {
  chargeCreationEventId,
  chargeEventPlan,
  chargeRecordCarriesEvents,
  type EventType,
  newEventId,
  type OutboxEvent,
  type Owner,
} from '../../core/events';
import { isX402Refund, type Payout } from '../../core/payouts';
import { toCharge } from '../../store/charges/charge-read.repository';
import { type Settlement, settledCharge } from '../../store/charges/charge-settlement.repository';

function event(type: EventType, owner: Owner, data: unknown, now: Date): OutboxEvent {
  return { id: newEventId(now), type, createdAt: now.toISOString(), owner, data };
}

/**
 * The events of a charge that has just reached its current state (`previous`: the status it
 * left; omit for a new charge). Agent events carry the Charge as the agent API shows it; user
 * events the charge as the user's history shows it (with the agent), and
 * `charge.approval_requested` the link the user approves it at.
 *
 * A new charge's events are dated by the charge (`createdAt`) and their ids derive from the charge
 * id, type and owner (core/events.ts `chargeCreationEventId`), so the dispatcher, deriving them
 * again from the charge's INSERT stream record (`chargeRecordEvents`), makes the very same bytes.
 */
export function chargeEvents(
  charge: Charge,
  opts: { previous?: string; previousReason?: string; approvalUrl?: string; now?: Date } = {},
): OutboxEvent[] {
  const now = opts.now ?? new Date();
  const created = opts.previous === undefined;
  return chargeEventPlan(charge, opts.previous, opts.previousReason).map(({ to, type }) => {
    // No receipt links (undefined): an event carries its signed `receipt` itself (DESIGN §27, docs/webhooks.md).
    const owner: Owner = to === 'agent' ? { kind: 'agent', id: charge.agentId } : { kind: 'user', id: charge.userId };
    const data =
      to === 'agent'
        ? chargeView(charge, undefined)
        : type === 'charge.approval_requested'
          ? { ...userChargeView(charge, undefined), approvalUrl: opts.approvalUrl ?? null }
          : userChargeView(charge, undefined);
    if (!created) return event(type, owner, data, now);
    return { id: chargeCreationEventId(charge.id, type, to, charge.createdAt), type, createdAt: charge.createdAt, owner, data };
  });
}

/**
 * The creation events a new charge item carries (DESIGN §18: the charge's own INSERT stream record
 * is their outbox, no outbox item is written): what `chargeEvents` made for it when it was
 * committed, byte for byte; none for an item whose events went to an outbox item (the approval
 * request, core/events.ts `chargeRecordCarriesEvents`). `item` is the NEW_IMAGE of the INSERT.
 */
export function chargeRecordEvents(item: Record<string, unknown>): OutboxEvent[] {
  // A purchase tells its creation to nobody but a payer asked to approve (an outbox item): its events are its settlement's.
  if (item.type !== 'Charge' || item.purchase !== undefined) return [];
  const charge = toCharge(item);
  return chargeRecordCarriesEvents(charge) ? chargeEvents(charge) : [];
}

/**
 * The events of settling the PENDING `charge` (approve, decline, capture, release, expiry):
 * succeeded, failed or expired to both; a hold its payer approved, `charge.pending` (pendingReason
 * capture) to the agent, who may now capture it.
 */
export function settlementEvents(charge: Charge, settlement: Settlement, now: Date): OutboxEvent[] {
  return chargeEvents(settledCharge(charge, settlement, now), { previous: 'PENDING', previousReason: charge.pendingReason, now });
}

/** `tab.closed` to the agent and to its payer, with the closed tab (DESIGN §29). */
export function tabClosedEvents(tab: { agentId: string; userId: string }, data: unknown, now: Date): OutboxEvent[] {
  return [
    event('tab.closed', { kind: 'agent', id: tab.agentId }, data, now),
    event('tab.closed', { kind: 'user', id: tab.userId }, data, now),
  ];
}

/** `charge.refunded` to the agent, with the charge as it stands after the refund. */
export function chargeRefundedEvents(charge: Charge, now: Date = new Date()): OutboxEvent[] {
  return [event('charge.refunded', { kind: 'agent', id: charge.agentId }, chargeView(charge, undefined), now)];
}

/** `payout.completed` or `payout.failed` to the agent, with the final Payout. */
export function payoutEvents(payout: Payout, now: Date = new Date()): OutboxEvent[] {
  // A refund of an x402 payment (DESIGN §28) tells its agent `x402.payment.refunded` once paid; a failed one gives the money back silently.
  if (isX402Refund(payout))
    return payout.status === 'COMPLETED'
      ? [event('x402.payment.refunded', { kind: 'agent', id: payout.agentId }, x402RefundView(payout, undefined), now)]
      : [];
  if (payout.status === 'COMPLETED')
    return [event('payout.completed', { kind: 'agent', id: payout.agentId }, payoutView(payout, undefined), now)];
  if (payout.status === 'FAILED')
    return [event('payout.failed', { kind: 'agent', id: payout.agentId }, payoutView(payout, undefined), now)];
  return [];
}

/** `topup.completed` to the user; `data` is the top-up as the top-up API shows it (phase 2, issue 12). */
export function topupCompletedEvents(userId: string, data: unknown, now: Date = new Date()): OutboxEvent[] {
  return [event('topup.completed', { kind: 'user', id: userId }, data, now)];
}

/** agent.enabled / agent.disabled (the dispatcher derives these from the agent item's stream record). */
export function agentEvents(agent: Agent, now: Date = new Date()): OutboxEvent[] {
  return [event(agent.enabled ? 'agent.enabled' : 'agent.disabled', { kind: 'agent', id: agent.id }, agentView(agent), now)];
}

/** `x402.purchase.succeeded` or `.expired` to the buying agent and to its payer, with the purchase as each sees it. */
export function purchaseEvents(
  charge: Charge,
  type: 'x402.purchase.succeeded' | 'x402.purchase.expired',
  view: (charge: Charge) => unknown,
  now: Date,
): OutboxEvent[] {
  const data = view(charge);
  return [event(type, { kind: 'agent', id: charge.agentId }, data, now), event(type, { kind: 'user', id: charge.userId }, data, now)];
}
