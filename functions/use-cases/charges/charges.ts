/**
 * Charges: an agent debits a user's balance in the charge's currency and earns it.
 */

import type { StoredReply } from '../../contracts/api';
import { type ChargeOutcome, type ChargeRefusal, renderCharge } from '../../contracts/charge-outcome';
import { decodeCursor, encodeCursor, isCount, pageLimit } from '../../contracts/cursor';
import type { CreateChargeRequest, ListChargesQuery } from '../../contracts/request.schemas';
import type { AgentRef } from '../../core/agents';
import { type AcceptedCharge, chargeAsDecided, decideCharge, grantLimitRefusal } from '../../core/charge-decision';
import { type Charge, MAX_PAGE_DEPTH } from '../../core/charges';
import {
  AgentDisabledError,
  BalanceLimitError,
  GrantPeriodsChangedError,
  InsufficientFundsError,
  PayerStateChangedError,
  SpendingLimitError,
  UserKeyRevokedError,
} from '../../core/errors';
import { refusedLimitMark } from '../../core/grant-alerts';
import { scopeRefusal } from '../../core/grant-scope';
import { hourOf } from '../../core/grants';
import { isId, newChargeId, newTabId } from '../../core/ids';
import { periodsOf } from '../../core/policy';
import { chargeIdOfPurchase, type PurchaseTerms } from '../../core/purchases';
import { tabOfHold } from '../../core/tabs';
import type { Balances, PayerState } from '../../core/users';
import { refusalText } from '../../messages/catalogue';
import { refuse } from '../../messages/refusal';
import { readAgentLedger } from '../../store/charges/balance.repository';
import { commitCharge, recordFailedCharge } from '../../store/charges/charge.repository';
import { countedAt } from '../../store/charges/charge-items';
import { getCharge, getChargeById, listCharges } from '../../store/charges/charge-read.repository';
import type { GrantKeyTerms } from '../../store/identity/credentials.repository';
import { AUTH_MESSAGES, forgetAgent, forgetUserKey } from '../auth';
import { chargeEvents } from '../events/events';
import { idempotent, type Step } from '../idempotency';
import { approvalToken, TOKEN_PLACEHOLDER, withApprovalToken } from './approval-token';
import { grantPeriods, payerState, rememberGrantPeriods, rememberPayer } from './payer-cache';

export type CreateChargeInput = Omit<CreateChargeRequest, 'capture'> & {
  /** false: authorize only (a hold). Absent: true, as the request schema's default. */
  capture?: boolean;
  agent: AgentRef & { name?: string };
  userId: string;
  /** The user key's hash: the charge only moves money while it is still the user's. */
  userKeyHash: string;
  /** Made with a grant key (DESIGN §16): the grant's terms; its item is conditioned in the charge's transaction. */
  grant?: GrantKeyTerms | undefined;
  idempotencyKey: string;
  /** Where the approval link points (`<base>/approve/<token>`). */
  baseUrl: string;
  /**
   * An x402 purchase's hold (use-cases/x402-purchases/purchases.ts): the same checks, hold and transaction as any
   * hold, keyed apart (`#x402-purchases`), answered as the purchase (its outcome carries the charge
   * as written), and telling nobody but the payer asked for approval: its other events come from its
   * settlement.
   */
  purchase?: { terms: PurchaseTerms } | undefined;
  /**
   * A tab's opening (use-cases/tabs/tabs.ts, DESIGN §29): the same checks, hold and transaction as any
   * hold, keyed apart (`#tabs`), the tab item and its entries written with it, answered as the tab.
   */
  tab?: true | undefined;
};

/** How long a hold waits for its capture when `holdSeconds` is not given (docs/design.md §12). */
export const DEFAULT_HOLD_SECONDS = 3600;

/** Rounds: a first charge of a new day or month (the payer's, a grant's), a changed policy, and an expired record each cost one. */
const CHARGE_ROUNDS = 5;

/**
 * Creates a charge, judged by the payer's spending policy (docs/design.md §11), in order:
 * 403 `agent blocked by user`, 402 `spending limit exceeded`, 402 `insufficient balance` (each
 * keeping a FAILED charge with that `failureReason`), 202 PENDING with an approval link above the
 * approval threshold (the amount held), else 201 SUCCESS. Every answer is stored under the
 * Idempotency-Key in the same transaction that writes it. A warm charge is one TransactWriteItems
 * and no read: the policy is this container's copy, and the write is conditioned on it.
 */
export function createCharge(input: CreateChargeInput): Promise<ChargeOutcome | StoredReply> {
  const { agent, userId, idempotencyKey, amount, currency, description, capture, grant, purchase, tab } = input;
  // A grant is for one currency: another is a bad request, refused before anything is stored.
  if (grant && grant.currency !== currency) throw refuse('grantCurrencyMismatch');
  // Authorize-then-capture (docs/lifecycle.md): the amount is held until captured or released.
  const holdSeconds = capture !== false ? undefined : (input.holdSeconds ?? DEFAULT_HOLD_SECONDS);
  const agentId = agent.id;
  return idempotent(
    {
      scope: purchase ? `${agentId}#x402-purchases` : tab ? `${agentId}#tabs` : `${agentId}#charges`,
      key: idempotencyKey,
      // A hold's request differs by its capture terms; a plain charge's fingerprint is as it always was.
      request: {
        userId,
        amount,
        currency,
        description,
        ...(holdSeconds !== undefined ? { capture: 'false', holdSeconds } : {}),
        ...(purchase ? { purchase: JSON.stringify([purchase.terms.requirements, purchase.terms.resource]) } : {}),
      },
      rounds: CHARGE_ROUNDS,
      // The stored answer has the links the sent one has (a charge made: its receipt link), on the same address.
      render: (outcome) => renderCharge(outcome, input.baseUrl),
      ...(purchase ? {} : { restore: withApprovalToken }),
    },
    ({ now, record }) => attemptCharge({ input, holdSeconds, now, record }),
  );
}

/** What one attempt of a charge request works with: the request, its hold terms, its time and its record. */
interface ChargeAttempt {
  input: CreateChargeInput;
  holdSeconds: number | undefined;
  now: Date;
  record: Step<ChargeOutcome>['record'];
}

/** One attempt: the payer's state (this container's copy), the decision, and its one transaction. */
async function attemptCharge(attempt: ChargeAttempt): Promise<ChargeOutcome> {
  const { input, holdSeconds, now } = attempt;
  const { agent, userId, grant } = input;
  const state = await payerState(userId);
  const base = baseCharge(attempt);
  const fail = (code: ChargeRefusal, judgedBy?: PayerState, grantLimit?: Charge['grantLimit']) =>
    keepFailed(attempt, { ...base, ...(grantLimit ? { grantLimit } : {}) }, code, judgedBy);
  const { amount, currency, purchase } = input;
  // Where the grant lets its agent pay (DESIGN §27), from the key's terms alone: refused, kept
  // FAILED, nothing held. Before the policy: it is about the request itself, as the currency is.
  const outside = scopeRefusal(
    grant?.scope,
    purchase ? { payTo: purchase.terms.requirements.payTo, resourceUrl: purchase.terms.resource?.url ?? null } : undefined,
  );
  if (outside) return fail(outside);
  const verdict = decideCharge({ policy: state.policy, agentId: agent.id, currency, amount, holdSeconds, grant, now });
  if (verdict.kind === 'refused') {
    if (verdict.reason === 'blocked') return fail('agentBlockedByUser', state);
    // The grant's limits on top of the policy's: the amount alone, here; the running totals, by the grant item's condition.
    if (verdict.reason === 'over-limit') return fail('spendingLimitExceeded', state);
    return fail('spendingLimitExceeded', undefined, refusedLimitMark(grant && grantLimitRefusal(grant.limits, amount), now));
  }
  const charge = chargeAsDecided(base, verdict);
  const created = await outcomeOf(input, charge, verdict, now);
  try {
    await commitDecided(attempt, { charge, verdict, state, created });
    // The counters are now this period's.
    rememberPayer(userId, { ...state, ...periodsOf(now) });
    if (grant) rememberGrantPeriods(grant.grantId, { ...periodsOf(now), hour: hourOf(now) });
    return created;
  } catch (error) {
    if (error instanceof PayerStateChangedError) rememberPayer(userId, error.state);
    if (error instanceof GrantPeriodsChangedError && grant) rememberGrantPeriods(grant.grantId, error.periods);
    if (error instanceof SpendingLimitError) return fail('spendingLimitExceeded', undefined, refusedLimitMark(error.grantLimit, now));
    if (error instanceof InsufficientFundsError) return fail('insufficientBalance');
    throw translate(error, input);
  }
}

/** The charge as asked for, before the decision (SUCCESS until judged otherwise). */
function baseCharge({ input, holdSeconds, now }: ChargeAttempt): Charge {
  const { agent, userId, idempotencyKey, amount, currency, description, grant, purchase, tab } = input;
  return {
    id: newChargeId(agent.id),
    agentId: agent.id,
    userId,
    idempotencyKey,
    amount,
    currency,
    description,
    status: 'SUCCESS',
    createdAt: now.toISOString(),
    ...(agent.name !== undefined ? { agentName: agent.name } : {}),
    ...(holdSeconds !== undefined ? { holdSeconds, authorizedAmount: amount } : {}),
    ...(grant ? { grantId: grant.grantId } : {}),
    ...(purchase ? { purchase: purchase.terms } : {}),
    ...(tab ? { tabId: newTabId(agent.id) } : {}),
  };
}

/** A refusal: a FAILED charge kept with its reason (the refusal's text), the answer stored under the key. */
async function keepFailed(attempt: ChargeAttempt, base: Charge, code: ChargeRefusal, judgedBy?: PayerState): Promise<ChargeOutcome> {
  const { input, now, record } = attempt;
  const { agent, userId, grant } = input;
  const refused: ChargeOutcome = { kind: 'refused', code };
  const failed: Charge = { ...base, status: 'FAILED', failureReason: refusalText(code) };
  try {
    await recordFailedCharge({
      charge: failed,
      agentKeyHash: agent.keyHash,
      idem: record(refused),
      now,
      policyJudged: judgedBy,
      events: chargeEvents(failed, { now }),
      grant: grant ? { userId, grantId: grant.grantId } : undefined,
    });
  } catch (error) {
    throw translate(error, input);
  }
  return refused;
}

const approvalLink = (input: CreateChargeInput, token: string) => `${input.baseUrl}/approve/${token}`;

/** What an accepted charge answers: made (201), waiting for its payer (202, with the link), or a purchase's hold. */
async function outcomeOf(input: CreateChargeInput, charge: Charge, verdict: AcceptedCharge, now: Date): Promise<ChargeOutcome> {
  const { grant, purchase } = input;
  const { needsApproval } = verdict;
  if (purchase) {
    // The charge as the store writes it (store/charges/charge-items.ts: with the counters it was added to), for the payment's record.
    const written = { ...charge, counted: countedAt(now, verdict.agentCounters, input.grant?.limits) };
    return { kind: 'purchase', charge: written, awaitsApproval: needsApproval };
  }
  if (input.tab) {
    const tab = tabOfHold(charge, needsApproval);
    if (!needsApproval) return { kind: 'tab', charge, tab, approvalUrl: null };
    if (grant) return { kind: 'tab', charge, tab, approvalUrl: null };
    const approvalUrl = approvalLink(input, await approvalToken(charge.id));
    return { kind: 'tab', charge, tab, approvalUrl, storedUrl: approvalLink(input, TOKEN_PLACEHOLDER) };
  }
  if (!needsApproval) return { kind: 'created', charge };
  // A grant key's charge: the link reaches the payer only (their webhook and PENDING history), never the agent.
  if (grant) return { kind: 'awaitsApproval', charge, approvalUrl: null };
  const approvalUrl = approvalLink(input, await approvalToken(charge.id));
  return { kind: 'awaitsApproval', charge, approvalUrl, storedUrl: approvalLink(input, TOKEN_PLACEHOLDER) };
}

/** The accepted charge's one transaction: the charge, the payer's debit or hold, the grant's totals, its events and its record. */
async function commitDecided(
  { input, now, record }: ChargeAttempt,
  decided: { charge: Charge; verdict: AcceptedCharge; state: PayerState; created: ChargeOutcome },
): Promise<void> {
  const { agent, userId, userKeyHash, currency, grant, purchase } = input;
  const { charge, verdict, state, created } = decided;
  const grantCharge = grant
    ? { grantId: grant.grantId, userId, basis: { agentId: agent.id, currency, limits: grant.limits, ...grantPeriods(grant.grantId) } }
    : undefined;
  // The events are written with the charge; the approval link's token never is (the
  // placeholder, filled in by the delivery worker: functions/webhooks/delivery.ts).
  const approvalUrl = verdict.needsApproval ? { approvalUrl: approvalLink(input, TOKEN_PLACEHOLDER) } : {};
  const all = chargeEvents(charge, { now, ...approvalUrl });
  const events = purchase ? all.filter((e) => e.type === 'charge.approval_requested') : all;
  await commitCharge({
    charge,
    decision: verdict,
    agentKeyHash: agent.keyHash,
    userKeyHash: grant ? undefined : userKeyHash,
    payer: state,
    grant: grantCharge,
    idem: record(created),
    events,
    now,
    ...(created.kind === 'tab' ? { tab: created.tab } : {}),
  });
}

/** The store's outcomes that end a charge request with an error of the API (others pass as they are). */
function translate(error: unknown, input: CreateChargeInput): unknown {
  if (error instanceof AgentDisabledError) {
    // The kill switch fired inside the transaction: the agent was disabled (or its key rotated)
    // after this container cached it. Forget the cached answer so the next request reads again.
    forgetAgent(input.agent.keyHash);
    return refuse(AUTH_MESSAGES.createCharge);
  }
  if (error instanceof UserKeyRevokedError) {
    forgetUserKey(input.userKeyHash);
    return refuse(AUTH_MESSAGES.user);
  }
  if (error instanceof BalanceLimitError) return refuse('agentBalanceLimit');
  return error;
}

/** One charge of this agent (another agent's charge is "not found", never "forbidden"). */
export async function readCharge(agentId: string | undefined, id: string | undefined): Promise<Charge> {
  // A purchase shows its own id (`xp…`) in the list: it reads back by that id.
  const chargeId = chargeIdOfPurchase(id) ?? id;
  if (!isId('charge', chargeId)) throw refuse('chargeNotFound');
  const charge = agentId ? await getCharge(agentId, chargeId) : await getChargeById(chargeId);
  if (!charge) throw refuse('chargeNotFound');
  return charge;
}

interface Cursor {
  after: string;
  page: number;
  limit: number;
}

/** A charge-list cursor: the last id returned and the page number that follows it. */
function readChargeCursor(text: string): Cursor {
  return decodeCursor(text, ([after, page, limit, ...rest]) =>
    rest.length === 0 && isId('charge', typeof after === 'string' ? after : undefined) && isCount(page) && isCount(limit)
      ? { after: after as string, page, limit }
      : undefined,
  );
}

/**
 * A page of charges, newest first, with `total` from the balance shards' counters and a
 * `nextCursor` that continues with one query however deep it goes.
 */
/** A page of an agent's charges (newest first), where it is among them, and the cursor of the next. */
export interface ChargePage {
  charges: Charge[];
  pagination: { total: number; page: number; limit: number; totalPages: number };
  nextCursor: string | null;
}

export async function listAgentCharges(agentId: string, query: ListChargesQuery): Promise<ChargePage> {
  const cursor = query.cursor ? readChargeCursor(query.cursor) : undefined;
  const page = cursor ? cursor.page : query.page;
  const limit = pageLimit(query.limit, cursor?.limit);
  if (!cursor && page * limit > MAX_PAGE_DEPTH) {
    throw refuse('pageTooDeep', MAX_PAGE_DEPTH);
  }
  const ledger = await readAgentLedger(agentId);
  const total = ledger.charges;
  const skip = (page - 1) * limit;
  const result =
    skip >= total && !cursor
      ? { charges: [], lastId: undefined }
      : await listCharges(agentId, { limit, skip, ...(cursor ? { after: cursor.after } : {}) });
  const more = result.lastId !== undefined && page * limit < total;
  return {
    charges: result.charges,
    pagination: { total, page, limit, totalPages: Math.ceil(total / limit) },
    nextCursor: more && result.lastId ? encodeCursor([result.lastId, page + 1, limit]) : null,
  };
}

/** The agent's earned, withdrawable balance per currency. */
export async function agentBalance(agentId: string): Promise<Balances> {
  const ledger = await readAgentLedger(agentId);
  return ledger.balances;
}
