/**
 * The charge lifecycle for agents (docs/design.md §12, docs/lifecycle.md): capture or release a
 * hold, refund a charge. Each is a money movement under an Idempotency-Key (`idempotent`),
 * ONE TransactWriteItems carrying its idempotency record and the agent's kill switch, after one
 * strongly consistent read of what it acts on (the charge; for a refund, with the agent's shards
 * in the same BatchGetItem).
 */

import { config } from '../../config';
import type { StoredReply } from '../../contracts/api';
import type { CaptureChargeRequest, RefundChargeRequest } from '../../contracts/request.schemas';
import { renderSettledCharge } from '../../contracts/settled-outcomes';
import type { AgentRef } from '../../core/agents';
import { type Charge, RELEASED_BY_AGENT } from '../../core/charges';
import {
  AgentBlockedError,
  AgentDisabledError,
  BalanceLimitError,
  ChargeAwaitsApprovalError,
  ChargeNotPendingError,
  GrantExpiredError,
  GrantRevokedError,
  RefundExceedsChargeError,
} from '../../core/errors';
import { isId } from '../../core/ids';
import type { ShardDebit } from '../../core/ledger';
import { type CaptureDecision, decideCapture, decideRefund, decideRelease, type RefundDecision } from '../../core/lifecycle';
import { AmountError, type Currency, type Minor, parseAmount, unitsToMinor } from '../../core/money';
import { type Refusal, refuse } from '../../messages/refusal';
import {
  type ChargeAndLedger,
  commitRefund,
  commitSettlement,
  readChargeAndLedger,
  readChargeAndLedgerSnapshot,
} from '../../store/charges/charge-lifecycle.repository';
import { getCharge } from '../../store/charges/charge-read.repository';
import { AUTH_MESSAGES, forgetAgent } from '../auth';
import { chargeEvents, chargeRefundedEvents } from '../events/events';
import { idempotent } from '../idempotency';

export interface LifecycleInput {
  agent: AgentRef;
  chargeId: string | undefined;
  idempotencyKey: string;
}

/**
 * The API's public address: the answer stored under the key carries the charge's receipt links on
 * it (DESIGN §27), so a replay sends the links the first answer did.
 */
interface WithLinks {
  baseUrl: string;
}

/** Rounds of read-then-commit: a capture or release races only once; refunds race each other and withdrawals. */
const SETTLE_ROUNDS = 3;
const REFUND_ROUNDS = 30;

/**
 * POST /api/v1/agents/charge/{id}/capture: the hold becomes SUCCESS for `amount` (default: all of
 * it), `authorizedAmount` keeps what was held, and the rest goes back to the user (and stops
 * counting against the user's limits), all in one transaction.
 */
export function captureCharge(input: LifecycleInput & WithLinks & CaptureChargeRequest): Promise<Charge | StoredReply> {
  const { agent, chargeId, idempotencyKey, baseUrl } = input;
  if (!isId('charge', chargeId)) throw refuse('chargeNotFound');
  return idempotent(
    {
      scope: `${agent.id}#capture`,
      key: idempotencyKey,
      request: { chargeId, amount: canonicalAmount(input.amount) },
      rounds: SETTLE_ROUNDS,
      render: (charge) => renderSettledCharge(charge, baseUrl),
    },
    async ({ now, record, replayIfUsed }) => {
      const pending = await pendingHold(agent.id, chargeId, replayIfUsed);
      if (!('hold' in pending)) return pending;
      const charge = pending.hold;
      const decision = decideCapture(charge, input.amount === undefined ? undefined : readAmount(input.amount, charge.currency), now);
      if (decision.kind === 'refused') throw CAPTURE_REFUSALS[decision.reason]();
      const { captured, authorized } = decision;
      const after: Charge = {
        ...withoutPending(charge),
        status: 'SUCCESS',
        amount: captured,
        authorizedAmount: authorized,
      };
      const done = record(after);
      try {
        const events = chargeEvents(after, { previous: 'PENDING', now });
        await commitSettlement(charge, { kind: 'capture', amount: captured }, agent.keyHash, done, now, events);
      } catch (error) {
        throw translate(error, agent);
      }
      return after;
    },
  );
}

/** POST /api/v1/agents/charge/{id}/release: the PENDING charge becomes FAILED `released by agent`; the hold goes back. */
export function releaseCharge(input: LifecycleInput): Promise<Charge | StoredReply> {
  const { agent, chargeId, idempotencyKey } = input;
  if (!isId('charge', chargeId)) throw refuse('chargeNotFound');
  // A released hold is FAILED: no receipt, no links (the route makes none).
  const render = (charge: Charge) => renderSettledCharge(charge, undefined);
  return idempotent(
    { scope: `${agent.id}#release`, key: idempotencyKey, request: { chargeId }, rounds: SETTLE_ROUNDS, render },
    async ({ now, record, replayIfUsed }) => {
      const pending = await pendingHold(agent.id, chargeId, replayIfUsed);
      if (!('hold' in pending)) return pending;
      const charge = pending.hold;
      if (decideRelease(charge, now).kind === 'refused') throw refuse('chargeExpired');
      const after: Charge = { ...withoutPending(charge), status: 'FAILED', failureReason: RELEASED_BY_AGENT };
      const done = record(after);
      try {
        await commitSettlement(
          charge,
          { kind: 'return', status: 'FAILED', failureReason: RELEASED_BY_AGENT },
          agent.keyHash,
          done,
          now,
          chargeEvents(after, { previous: 'PENDING', now }),
        );
      } catch (error) {
        throw translate(error, agent);
      }
      return after;
    },
  );
}

/**
 * POST /api/v1/agents/charge/{id}/refund: gives `amount` (default: all that is left) of a SUCCESS
 * charge back to the user from the agent's earned balance. Refunds add up in `refundedAmount` and
 * never pass the charge's amount, however many race; the agent's balance never goes below zero,
 * whatever withdrawal races them (both debit the shards under a condition).
 */
export function refundCharge(input: LifecycleInput & WithLinks & RefundChargeRequest): Promise<Charge | StoredReply> {
  const { agent } = input;
  return refund({ ...input, agentId: agent.id, killSwitch: agent.keyHash, scope: `${agent.id}#refund` }, (error) =>
    translate(error, agent),
  );
}

export interface OperatorRefundInput extends RefundChargeRequest, WithLinks {
  agentId: string | undefined;
  chargeId: string | undefined;
  idempotencyKey: string;
}

/**
 * POST /api/v1/admin/agents/{id}/charges/{chargeId}/refund: the operator gives a charge back to its
 * payer, as the agent's own refund does (the agent's earned balance → the payer's, one transaction
 * with its idempotency record), without the agent's kill switch: a disabled agent cannot refund,
 * and its earnings must still be returnable (docs/lifecycle.md). The charge keeps what the operator
 * gave back (`operatorRefundedAmount`); the agent gets `charge.refunded` as for its own refund.
 */
export function refundChargeByOperator(input: OperatorRefundInput): Promise<Charge | StoredReply> {
  const { agentId } = input;
  if (!isId('agent', agentId)) throw refuse('chargeNotFound');
  return refund({ ...input, agentId, killSwitch: undefined, scope: `${agentId}#operator-refund` }, (error) => error);
}

interface RefundRun extends RefundChargeRequest, WithLinks {
  agentId: string;
  chargeId: string | undefined;
  idempotencyKey: string;
  /** The agent's key hash: its own refund carries its kill switch. Undefined: the operator's. */
  killSwitch: string | undefined;
  scope: string;
}

/** One refund (the agent's or the operator's): read the charge and the shards, judge, commit once. */
function refund(run: RefundRun, translateError: (error: unknown) => unknown): Promise<Charge | StoredReply> {
  const { agentId, chargeId, idempotencyKey } = run;
  if (!isId('charge', chargeId)) throw refuse('chargeNotFound');
  return idempotent(
    {
      scope: run.scope,
      key: idempotencyKey,
      request: { chargeId, amount: canonicalAmount(run.amount) },
      rounds: REFUND_ROUNDS,
      exhausted: () => refuse('chargeChanging'),
      render: (charge) => renderSettledCharge(charge, run.baseUrl),
    },
    async ({ now, record, replayIfUsed }) => {
      // A refund that already committed under this key is answered as it was, whatever came since.
      const refusal = async (error: Refusal) => {
        const replayed = await replayIfUsed();
        if (replayed) return replayed;
        throw error;
      };
      let verdict = judgeRefund(await readChargeAndLedger(agentId, chargeId), run.amount);
      // The plain read is item by item: a refund of this charge, a withdrawal or a charge that
      // committed meanwhile can show in the shards and not in the charge, or in one shard and not
      // another. Never refuse for funds on that: ask one snapshot, and answer by it (a charge that
      // is used up by then is 400, as the refundable check comes first).
      if (verdict.kind === 'short') verdict = judgeRefund(await readChargeAndLedgerSnapshot(agentId, chargeId), run.amount);
      if (verdict.kind !== 'refund') return refusal(verdict.kind === 'short' ? refuse('insufficientBalance') : verdict.error);
      const { charge, amount, plan } = verdict;
      const refundedCharge: Charge = { ...charge, refundedAmount: (charge.refundedAmount ?? 0) + amount };
      const done = record(refundedCharge);
      try {
        await commitRefund(charge, amount, plan, run.killSwitch, done, now, chargeRefundedEvents(refundedCharge, now));
      } catch (error) {
        if (error instanceof RefundExceedsChargeError) return refusal(refuse('amountExceedsRefundable'));
        if (error instanceof BalanceLimitError) throw refuse('userBalanceLimit');
        throw translateError(error);
      }
      return refundedCharge;
    },
  );
}

type RefundVerdict =
  | { kind: 'refund'; charge: Charge; amount: Minor; plan: ShardDebit[] }
  | { kind: 'refused'; error: Refusal }
  /** The charge allows it, but the agent's shards as read hold too little in all. */
  | { kind: 'short' };

/**
 * What a refund of `literal` (all that is left when absent) gets, from the charge and shards as
 * read (core/lifecycle.ts `decideRefund`), in the contract's order: 404, 409 not refundable, 400
 * exceeds refundable, then the funds.
 */
function judgeRefund(read: ChargeAndLedger, literal: string | undefined): RefundVerdict {
  const { charge, ledger } = read;
  // A purchase paid a seller, not this agent: nothing of it is the agent's to give back.
  if (!charge || charge.purchase) throw refuse('chargeNotFound');
  const decision = decideRefund(charge, ledger, (currency) => (literal === undefined ? undefined : readAmount(literal, currency)));
  if (decision.kind === 'refused') return { kind: 'refused', error: REFUND_REFUSALS[decision.reason]() };
  return decision.kind === 'refund' ? { ...decision, charge } : decision;
}

const CAPTURE_REFUSALS: Record<Extract<CaptureDecision, { kind: 'refused' }>['reason'], () => Refusal> = {
  'exceeds-authorized': () => refuse('amountExceedsAuthorized'),
  expired: () => refuse('chargeExpired'),
  'awaits-approval': () => refuse('chargeAwaitsApproval'),
};

const REFUND_REFUSALS: Record<Extract<RefundDecision, { kind: 'refused' }>['reason'], () => Refusal> = {
  'not-refundable': () => refuse('chargeNotRefundable'),
  'exceeds-refundable': () => refuse('amountExceedsRefundable'),
};

/**
 * The PENDING charge a capture or release acts on (strongly consistent read of the charge itself),
 * or what to answer instead: a replay of this very key (it may be what moved the charge on), 404
 * for an unknown id or another agent's charge, 409 once it is no longer PENDING.
 */
async function pendingHold(
  agentId: string,
  chargeId: string,
  replayIfUsed: () => Promise<StoredReply | undefined>,
): Promise<{ hold: Charge } | StoredReply> {
  const charge = await getCharge(agentId, chargeId);
  // A purchase's hold ends by the chain alone (use-cases/x402-purchases/purchases.ts): not a charge its agent captures or releases.
  // A tab's hold ends by the tab's close (use-cases/tabs/close.ts), which captures what it used.
  if (!charge || charge.purchase || charge.tabId !== undefined) throw refuse('chargeNotFound');
  if (charge.status === 'PENDING') return { hold: charge };
  const replayed = await replayIfUsed();
  if (replayed) return replayed;
  throw notPending(charge.status);
}

const notPending = (status: string) => (status === 'EXPIRED' ? refuse('chargeExpired') : refuse('chargeNotPending'));

function withoutPending(charge: Charge): Charge {
  const { pendingReason: _reason, ...rest } = charge;
  return rest;
}

/** An amount literal of the charge's currency, exactly, or 400 naming `amount`. */
function readAmount(literal: string, currency: Currency): Minor {
  try {
    return parseAmount(literal, currency, unitsToMinor(config().MAX_AMOUNT, currency));
  } catch (error) {
    if (error instanceof AmountError) throw refuse('invalidAmount', error.reason);
    throw error;
  }
}

/**
 * What makes two captures or refunds "the same": the amount as a number, not as it was written
 * (1.5 and 1.50 are one amount), `all` when absent. A literal no currency accepts is kept as is:
 * it is refused before anything is stored.
 */
function canonicalAmount(literal: string | undefined): string {
  if (literal === undefined) return 'all';
  try {
    return String(parseAmount(literal, 'USDC', Number.MAX_SAFE_INTEGER));
  } catch {
    return literal;
  }
}

/** The store's outcomes as the API's errors. */
function translate(error: unknown, agent: AgentRef): unknown {
  if (error instanceof AgentDisabledError) {
    // Disabled, or its key rotated, after this container cached it: forget, and refuse.
    forgetAgent(agent.keyHash);
    return refuse(AUTH_MESSAGES.lifecycle);
  }
  if (error instanceof ChargeAwaitsApprovalError) return refuse('chargeAwaitsApproval');
  // The payer changed their mind about a hold (DESIGN §16): the capture's own transaction found it.
  if (error instanceof AgentBlockedError) return refuse('agentBlockedByUser');
  if (error instanceof GrantRevokedError) return refuse('grantRevoked');
  if (error instanceof GrantExpiredError) return refuse('grantExpired');
  if (error instanceof ChargeNotPendingError) return notPending(error.status);
  if (error instanceof BalanceLimitError) return refuse('agentBalanceLimit');
  return error;
}
