/**
 * Domain outcomes: what the store and the decisions say happened, without a word of HTTP. The
 * public refusals (status and exact text) are the catalogue's (functions/messages/catalogue.ts);
 * a use case that meets one of these turns it into a refusal there, or acts on it.
 */

import { Refusal } from '../messages/refusal';
import type { ChargeStatus } from './charges';
import type { GrantLimits } from './grants';
import type { IdempotencyRecord } from './idempotency';
import type { PayerState } from './users';

/**
 * DynamoDB kept refusing (throttling or conflicts past every retry): the client may retry. The
 * store throws it as it is; its status and text are the catalogue's `serviceBusy`.
 */
export class ServiceBusyError extends Refusal<'serviceBusy'> {
  constructor(cause?: unknown) {
    super('serviceBusy', [], { cause });
  }
}

/*
 * Domain outcomes. Repositories turn every DynamoDB outcome a use case must act on into one of
 * these, so no use case knows which item of a transaction failed or how DynamoDB said so.
 */

/** A base for the outcomes below: plain errors, never shown to a client as they are. */
export class DomainError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A conditional debit found too little money. */
export class InsufficientFundsError extends DomainError {
  constructor() {
    super('insufficient funds');
  }
}

/** A credit would take a balance past MAX_BALANCE_MINOR (core/money.ts). */
export class BalanceLimitError extends DomainError {
  constructor() {
    super('balance limit reached');
  }
}

/** The idempotency key was already used: the live record it holds is attached when known. */
export class IdempotencyRecordExistsError extends DomainError {
  constructor(readonly existing: IdempotencyRecord | undefined) {
    super('idempotency record exists');
  }
}

/**
 * What a write was conditioned on (a balance, a shard) changed since it was read: read again and
 * retry. Every such failure means another write committed, so retries make progress.
 */
export class StaleReadError extends DomainError {
  constructor(what: string) {
    super(`${what} changed since it was read`);
  }
}

/** The charge would take a running total (daily, monthly) past the payer's limit. */
export class SpendingLimitError extends DomainError {
  /** `grantLimit`: the grant's limit that refused it (its alert: core/grant-alerts.ts); absent for the payer's policy. */
  constructor(readonly grantLimit?: keyof GrantLimits) {
    super('spending limit exceeded');
  }
}

/** The user key used is no longer the user's (rotated): the charge must not move money. */
export class UserKeyRevokedError extends DomainError {
  constructor() {
    super('user key revoked');
  }
}

/**
 * A grant's counter periods moved since this container last saw them (another charge rolled a
 * day or month over): carries the periods the grant item shows, for the next round (a stale read).
 */
export class GrantPeriodsChangedError extends StaleReadError {
  constructor(readonly periods: { hour?: string; day?: string; month?: string }) {
    super('grant spend period');
  }
}

/** A capture or an approval found the grant its charge was made under revoked (DESIGN §16, docs/grants.md). */
export class GrantRevokedError extends DomainError {
  constructor() {
    super('grant revoked');
  }
}

/** A capture or an approval found the grant its charge was made under past its `expiresAt` (docs/grants.md). */
export class GrantExpiredError extends DomainError {
  constructor() {
    super('grant expired');
  }
}

/** A capture found the payer had blocked the agent (DESIGN §16). */
export class AgentBlockedError extends DomainError {
  constructor() {
    super('agent blocked by user');
  }
}

/**
 * The payer's policy or spend periods moved since this container last saw them. Carries what the
 * item says now, so the next round judges the charge against it (a stale read, retried).
 */
export class PayerStateChangedError extends StaleReadError {
  constructor(readonly state: PayerState) {
    super('payer policy or spend period');
  }
}

/** A PENDING charge's state moved on (approved, declined, expired, captured, released). */
export class ChargeNotPendingError extends DomainError {
  constructor(readonly status: ChargeStatus) {
    super('charge is not pending');
  }
}

/** A hold's capture came while it still waits for the user's approval (`pendingReason: user_approval`). */
export class ChargeAwaitsApprovalError extends DomainError {
  constructor() {
    super('charge awaits user approval');
  }
}

/** A refund would take the charge's refunded total past its amount. */
export class RefundExceedsChargeError extends DomainError {
  constructor() {
    super('amount exceeds refundable amount');
  }
}

/** The agent already has a payout in flight (its lock item exists). */
export class PayoutInProgressError extends DomainError {
  constructor() {
    super('payout already in progress');
  }
}

/** Another attempt holds (or took over) this payout's lease, or its state moved on. */
export class LeaseLostError extends DomainError {
  constructor(readonly payoutId: string) {
    super(`lease on payout ${payoutId} lost`);
  }
}

/**
 * The agent item no longer says enabled for this key (disabled by an operator, or the key was
 * rotated) at the moment the money would move: the kill switch.
 */
export class AgentDisabledError extends DomainError {
  constructor() {
    super('agent disabled');
  }
}

/** The agent name (or a case variant of it) is already registered. */
export class AgentNameTakenError extends DomainError {
  constructor() {
    super('agent name taken');
  }
}

/** A passkey's credential id is registered already (an authenticator's ids are unique: a crafted or replayed one). */
export class PasskeyTakenError extends DomainError {
  constructor() {
    super('passkey credential id taken');
  }
}

/**
 * A passkey a write was conditioned on is gone (removed, or by a rotation), or its signature
 * counter moved since it was read (another ceremony used that very state first).
 */
export class PasskeyGoneError extends DomainError {
  constructor() {
    super('passkey removed or used meanwhile');
  }
}

/**
 * A transaction kept being cancelled by concurrent writes past every retry. For a request with
 * an Idempotency-Key the likeliest cause is a concurrent request with that very key.
 */
export class ConcurrencyError extends DomainError {
  constructor(options?: { cause?: unknown }) {
    super('transaction kept conflicting with concurrent writes', options);
  }
}
