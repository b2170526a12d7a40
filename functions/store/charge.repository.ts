/**
 * Charges: their commit. A charge is ONE TransactWriteItems:
 *   - the user's item: balance debited (or moved to held for a PENDING charge), spend counters
 *     raised, all conditioned on the basis it was judged by (store/payer.ts),
 *   - one shard of the agent's earned balance credited (nothing while PENDING) and its charge
 *     count bumped, conditioned on the shard's copy of the kill switch being on for this key
 *     (store/balance.repository.ts): no item is shared by all charges of one agent,
 *   - the charge written,
 *   - the idempotency record written,
 *   - (PENDING only) the pending marker: how approve/decline find it and the sweeper expires it
 *     (charge-pending.repository.ts),
 *   - (a grant key's charge) the grant item's counters and status (store/grant-charge.ts),
 *   - no outbox item for its webhook events: the charge item's own INSERT stream record is their
 *     outbox (the dispatcher derives them, use-cases/events.ts `chargeRecordEvents`; 8 of the
 *     warm charge's 24 write units, docs/data-model.md); only a charge that asks its payer for
 *     approval writes one (store/outbox.ts), since its link is not in the item.
 * A refused charge keeps a FAILED record with its reason, written with its idempotency record.
 * Each item carries what its failed condition means (store/transact.ts `named`), so the order of
 * the items says nothing. How a PENDING charge ends: charge-settlement.repository.ts; the
 * agent's capture, release and refunds: charge-lifecycle.repository.ts; reads: charge-read.repository.ts.
 */
import { config } from '../config';
import type { Charge } from '../core/charges';
import { PayerStateChangedError } from '../core/errors';
import { chargeRecordCarriesEvents, type OutboxEvent } from '../core/events';
import type { IdempotencyWrite } from '../core/idempotency';
import type { PayerState } from '../core/users';
import { randomShard, shardCredit } from './balance.repository';
import { type PendingCharge, pendingOf } from './charge-pending.repository';
import { type GrantCharge, grantActiveCheck, grantChargeItem } from './grant-charge';
import { idempotencyPut } from './idempotency.repository';
import { withOutbox } from './outbox';
import { type ChargeBasis, chargeRefusal, chargeUserUpdate, countedBy, payerStateOf } from './payer';
import { keys } from './table';
import { named, type TransactEntry, type TransactItem, transactWrite } from './transact';

/**
 * Commits a charge: SUCCESS, or PENDING (the amount held) when `basis.hold`. Conditioned on the
 * kill switch being on for `agentKeyHash` (the credited shard's copy) and on the payer's basis. Throws, in this order of
 * precedence: IdempotencyRecordExistsError (a replay wins: the first request's answer is the
 * answer), AgentDisabledError, then what the user's item says (UserKeyRevokedError,
 * PayerStateChangedError to retry, SpendingLimitError, InsufficientFundsError), or
 * BalanceLimitError when the agent's shard is at its cap. `events` (use-cases/events.ts) are
 * written in the same transaction, last, as an outbox item only when the charge item's own stream
 * record does not carry them (`outboxedEvents`). The charge and its marker keep which counters it was
 * added to (`Charge.counted`), for whatever gives its hold back.
 */
export async function commitCharge(
  made: Charge,
  agentKeyHash: string,
  basis: ChargeBasis & { grant?: GrantCharge | undefined },
  idem: IdempotencyWrite,
  now: Date,
  events: readonly OutboxEvent[] = [],
): Promise<void> {
  const table = config().TABLE_NAME;
  const charge: Charge = { ...made, counted: countedBy(basis, now) };
  const items: TransactEntry[] = [
    named(
      {
        Update: {
          TableName: table,
          Key: keys.user(charge.userId),
          ...chargeUserUpdate(charge.agentId, charge.currency, charge.amount, basis, now),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      // What the user's item says (revoked key, stale basis, limit, funds), before the shard's cap.
      { onConditionFailed: (old) => chargeRefusal(old, charge.agentId, charge.currency, charge.amount, basis, now), precedence: 1 },
    ),
    // A PENDING charge is counted in the list's total now; its money reaches the agent on approval.
    shardCredit(charge.agentId, randomShard(), charge.currency, basis.hold ? 0 : charge.amount, {
      countsCharge: true,
      killSwitch: agentKeyHash,
    }),
    chargePut(charge),
    idempotencyPut(idem, now),
  ];
  if (basis.hold) items.push(pendingMarkerPut(charge));
  if (basis.grant) items.push(grantChargeItem(charge, basis.grant, now));
  await transactWrite(withOutbox(items, outboxedEvents(charge, events), now));
}

/**
 * The events of a new charge that need an outbox item: none when the charge's INSERT stream record
 * carries them (core/events.ts `chargeRecordCarriesEvents`; the dispatcher derives the same ids and
 * bytes from it), all of them otherwise.
 */
function outboxedEvents(charge: Charge, events: readonly OutboxEvent[]): readonly OutboxEvent[] {
  return chargeRecordCarriesEvents(charge) ? [] : events;
}

/** What goes with a refused charge's record. */
export interface FailedChargeOptions {
  /**
   * The payer's state a refusal by the payer's policy was judged under: the record is then
   * conditioned on that policy still being the user's (PayerStateChangedError otherwise).
   */
  policyJudged?: PayerState | undefined;
  /** charge.failed: carried by the FAILED charge's own INSERT stream record (no outbox item). */
  events?: readonly OutboxEvent[];
  /** Made with a grant key: the record is conditioned on the grant being active (`grantActiveCheck`). */
  grant?: { userId: string; grantId: string } | undefined;
}

/**
 * Keeps a FAILED charge (refused: its `failureReason` says why) with its idempotency record; moves
 * no money. The shard write only counts the charge, so the list's `total` includes refusals.
 * A refusal by the payer's policy (`policyJudged`) is conditioned on that policy still being the
 * user's: judged under a stale copy, it throws PayerStateChangedError and is judged again.
 */
export async function recordFailedCharge(
  charge: Charge,
  agentKeyHash: string,
  idem: IdempotencyWrite,
  now: Date,
  opts: FailedChargeOptions = {},
): Promise<void> {
  const { policyJudged, events = [], grant } = opts;
  const items: TransactEntry[] = [
    // The kill switch too: a disabled agent's refusals are not recorded (AgentDisabledError).
    shardCredit(charge.agentId, randomShard(), charge.currency, 0, { countsCharge: true, killSwitch: agentKeyHash }),
    chargePut(charge),
    idempotencyPut(idem, now),
  ];
  if (policyJudged) {
    items.push(
      named(
        {
          ConditionCheck: {
            TableName: config().TABLE_NAME,
            Key: keys.user(charge.userId),
            ConditionExpression:
              policyJudged.policyVersion === 0 ? 'attribute_not_exists(policyVersion) OR policyVersion = :v' : 'policyVersion = :v',
            ExpressionAttributeValues: { ':v': policyJudged.policyVersion },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        { onConditionFailed: (old) => new PayerStateChangedError(payerStateOf(old ?? {})), precedence: 1 },
      ),
    );
  }
  if (grant) items.push(grantActiveCheck(grant, now));
  await transactWrite(withOutbox(items, outboxedEvents(charge, events), now));
}

function pendingMarkerPut(charge: Charge): TransactItem {
  if (!charge.expiresAt || !charge.pendingReason) throw new Error('a PENDING charge needs expiresAt and pendingReason');
  const marker: PendingCharge = pendingOf(charge);
  return {
    Put: {
      TableName: config().TABLE_NAME,
      Item: {
        ...keys.pendingCharge(charge.id),
        ...keys.pendingExpiryIndex(charge.expiresAt, charge.id),
        type: 'PendingCharge',
        ...marker,
      },
      ConditionExpression: 'attribute_not_exists(PK)',
    },
  };
}

function chargePut(charge: Charge): TransactItem {
  return {
    Put: {
      TableName: config().TABLE_NAME,
      Item: {
        // No by-id index entry: the id names the agent, so its key is known (core/ids.ts newChargeId).
        ...keys.charge(charge.agentId, charge.id),
        ...keys.userChargeIndex(charge.userId, charge.id),
        ...(charge.purchase ? keys.purchaseIndex(charge.agentId, charge.id) : {}),
        type: 'Charge',
        ...charge,
      },
      ConditionExpression: 'attribute_not_exists(PK)',
    },
  };
}
