/**
 * The items of a charge's ONE TransactWriteItems, built in one place from the pure decision
 * (core/charge-decision.ts `decideCharge`) and the request's inputs: what each item is, what its
 * condition holds, and what a failure of that condition means (store/transact.ts `named`). The
 * repository (charge.repository.ts) only writes them.
 *
 * The payer's item (charge-payer-items.ts) and the grant's (grant-charge-items.ts) are built beside
 * it, each with its own conditions and the reading of their failure.
 *
 * An accepted charge (`chargeItems`), SUCCESS, or PENDING (the amount held) when the decision
 * says so; an x402 purchase's hold is one of these:
 *   - `payerDebit`: the user's item, its balance debited (or moved to held), its spend counters
 *     raised, all conditioned on the basis the charge was judged by (the key, the policy version,
 *     the counters' periods, every running total within its limit, enough money, no debt);
 *   - `agentCredit`: one shard of the agent's earned balance credited (nothing while PENDING) and
 *     its charge count bumped, conditioned on the shard's copy of the kill switch being on for this
 *     key (store/charges/balance.repository.ts): no item is shared by all charges of one agent;
 *   - `charge`: the charge written, with the counters it was added to (`Charge.counted`);
 *   - `idempotency`: the idempotency record, the answer (store/idempotency.repository.ts);
 *   - `pendingMarker` (PENDING only): how approve/decline, capture/release find it and the sweeper
 *     expires it (charge-pending.repository.ts);
 *   - `grantSpend` (a grant key's charge): the grant item's counters, conditioned on everything the
 *     grant says (DESIGN §16 "Cost rule");
 *   - `outbox`: only for a charge that asks its payer for approval (its link is not in the item);
 *     every other charge's events come from the charge item's own INSERT stream record (the
 *     dispatcher derives them, use-cases/events/events.ts `chargeRecordEvents`; DESIGN §18);
 *   - `statement`: the payer's statement entry of the debit (`charge`, `hold`, `x402_purchase`;
 *     store/statement/statement-items.ts), so the statement is exact under any race.
 *
 * A refused charge (`refusedChargeItems`) keeps a FAILED record with its idempotency record and
 * moves no money: `agentCount` (the shard counts it, behind the kill switch), `charge`,
 * `idempotency`, `policyCheck` (a refusal by the payer's policy: that policy is still the user's),
 * `grantActive` (a grant key's: the grant is still active), `outbox` (as above).
 *
 * Each item carries what its failed condition means, so the order of the items says nothing; the
 * order below is kept only because it is what the bench's per-item table and the pinned
 * transaction (test/store/charge-transaction.int.test.ts) show.
 */
import { config } from '../../config';
import type { AcceptedCharge } from '../../core/charge-decision';
import type { Charge, SpendCounted } from '../../core/charges';
import { chargeRecordCarriesEvents, type OutboxEvent } from '../../core/events';
import { type GrantLimits, hourOf } from '../../core/grants';
import type { IdempotencyWrite } from '../../core/idempotency';
import { periodsOf } from '../../core/policy';
import type { Tab } from '../../core/tabs';
import type { PayerState } from '../../core/users';
import { outboxPut } from '../events/outbox';
import { idempotencyPut } from '../idempotency.repository';
import { chargeEntry, statementPut } from '../statement/statement-items';
import { keys } from '../table';
import { tabOpenItems } from '../tabs/tab-items';
import type { NamedItem, TransactEntry, TransactItem } from '../transact';
import { randomShard, shardCredit } from './balance.repository';
import { type PayerBasis, payerDebit, policyStillCheck } from './charge-payer-items';
import { type PendingCharge, pendingOf } from './charge-pending.repository';
import { type GrantCharge, grantActiveCheck, grantSpend } from './grant-charge-items';

/** An accepted charge to write: the decision, and what it was decided from. */
export interface ChargeWrite {
  /** The charge as answered: PENDING exactly when the decision is (core/charge-decision.ts `chargeAsDecided`). */
  charge: Charge;
  decision: AcceptedCharge;
  /** The agent key's hash: the credited shard's kill switch must be on for it. */
  agentKeyHash: string;
  /** The account key's hash it was authorised with; undefined for a grant key's charge (the grant item's condition decides). */
  userKeyHash: string | undefined;
  /** The payer's state it was judged under (cached): the debit is conditioned on it. */
  payer: PayerState;
  grant?: GrantCharge | undefined;
  idem: IdempotencyWrite;
  /** Its webhook events (use-cases/events/events.ts); an outbox item only when its record does not carry them. */
  events: readonly OutboxEvent[];
  now: Date;
  /** A tab's opening (DESIGN §29): the hold is this charge; the tab and its list entries join its transaction. */
  tab?: Tab | undefined;
}

/** The items of an accepted charge's transaction, by what each one is. */
export interface ChargeItems {
  payerDebit: NamedItem;
  agentCredit: NamedItem;
  charge: TransactItem;
  idempotency: NamedItem;
  pendingMarker?: TransactItem;
  grantSpend?: NamedItem;
  outbox?: TransactItem;
  /** A tab's opening: the tab item and its entries (store/tabs/tab-items.ts). */
  tabOpen?: TransactItem[];
  /** The payer's statement entry: the debit of the available balance (docs/statement.md). */
  statement: TransactItem;
}

/** An accepted charge's items, each with what its failed condition means. */
export function chargeItems(write: ChargeWrite): ChargeItems {
  const { decision, agentKeyHash, grant, idem, events, now } = write;
  const hold = decision.pending !== undefined;
  const charge: Charge = { ...write.charge, counted: countedAt(now, decision.agentCounters, grant?.basis.limits) };
  const outbox = chargeOutbox(charge, events, now);
  return {
    payerDebit: payerDebit(charge, payerBasis(write, hold), now),
    // A PENDING charge is counted in the list's total now; its money reaches the agent on approval.
    agentCredit: shardCredit(charge.agentId, randomShard(), charge.currency, hold ? 0 : charge.amount, {
      countsCharge: true,
      killSwitch: agentKeyHash,
    }),
    charge: chargePut(charge),
    idempotency: idempotencyPut(idem, now),
    ...(hold ? { pendingMarker: pendingMarkerPut(charge) } : {}),
    ...(grant ? { grantSpend: grantSpend(charge, grant, now) } : {}),
    ...(outbox ? { outbox } : {}),
    ...(write.tab ? { tabOpen: tabOpenItems(write.tab, charge) } : {}),
    statement: statementPut(chargeEntry(charge, hold, now)),
  };
}

/**
 * The counters a new charge is added to, as its record keeps them (`Charge.counted`): the UTC day
 * and month always; the hour only under a grant with an hourly limit, whose hour counter it is
 * (a settlement gives back to it while it is still that hour: grant-settlement-items.ts).
 */
export function countedAt(now: Date, agent: boolean, grantLimits?: GrantLimits): SpendCounted {
  return { ...periodsOf(now), agent, ...(grantLimits?.hourly !== undefined ? { hour: hourOf(now) } : {}) };
}

/** How the charge was judged: what the payer's debit is conditioned on. */
const payerBasis = (write: ChargeWrite, hold: boolean): PayerBasis => ({
  userKeyHash: write.userKeyHash,
  state: write.payer,
  limits: write.decision.limits,
  agentCounters: write.decision.agentCounters,
  hold,
});

/** The transaction of an accepted charge's items. */
export const chargeTransaction = (items: ChargeItems): TransactEntry[] =>
  present([
    items.payerDebit,
    items.agentCredit,
    items.charge,
    items.idempotency,
    items.pendingMarker,
    items.grantSpend,
    items.outbox,
    ...(items.tabOpen ?? []),
    items.statement,
  ]);

/** A refused charge to record (FAILED, its `failureReason` says why). */
export interface RefusedChargeWrite {
  charge: Charge;
  agentKeyHash: string;
  idem: IdempotencyWrite;
  now: Date;
  /**
   * The payer's state a refusal by the payer's policy was judged under: the record is then
   * conditioned on that policy still being the user's (PayerStateChangedError otherwise).
   */
  policyJudged?: PayerState | undefined;
  /** charge.failed: carried by the FAILED charge's own INSERT stream record (no outbox item). */
  events?: readonly OutboxEvent[];
  /** Made with a grant key: the record is conditioned on the grant being active. */
  grant?: { userId: string; grantId: string } | undefined;
}

/** The items of a refused charge's transaction, by what each one is. */
export interface RefusedChargeItems {
  agentCount: NamedItem;
  charge: TransactItem;
  idempotency: NamedItem;
  policyCheck?: NamedItem;
  grantActive?: NamedItem;
  outbox?: TransactItem;
}

/**
 * A refused charge's items: no money moves. The shard write only counts the charge, so the list's
 * `total` includes refusals; a refusal by the payer's policy is conditioned on that policy still
 * being the user's (judged under a stale copy, it is PayerStateChangedError and judged again).
 */
export function refusedChargeItems(write: RefusedChargeWrite): RefusedChargeItems {
  const { charge, agentKeyHash, idem, now, policyJudged, events = [], grant } = write;
  const outbox = chargeOutbox(charge, events, now);
  return {
    // The kill switch too: a disabled agent's refusals are not recorded (AgentDisabledError).
    agentCount: shardCredit(charge.agentId, randomShard(), charge.currency, 0, { countsCharge: true, killSwitch: agentKeyHash }),
    charge: chargePut(charge),
    idempotency: idempotencyPut(idem, now),
    ...(policyJudged ? { policyCheck: policyStillCheck(charge.userId, policyJudged) } : {}),
    ...(grant ? { grantActive: grantActiveCheck(grant, now) } : {}),
    ...(outbox ? { outbox } : {}),
  };
}

/** The transaction of a refused charge's items. */
export const refusedChargeTransaction = (items: RefusedChargeItems): TransactEntry[] =>
  present([items.agentCount, items.charge, items.idempotency, items.policyCheck, items.grantActive, items.outbox]);

const present = (entries: readonly (TransactEntry | undefined)[]): TransactEntry[] =>
  entries.filter((e): e is TransactEntry => e !== undefined);

/**
 * The outbox Put of a new charge's events: none when the charge's INSERT stream record carries
 * them (core/events.ts `chargeRecordCarriesEvents`; the dispatcher derives the same ids and bytes
 * from it), all of them otherwise.
 */
function chargeOutbox(charge: Charge, events: readonly OutboxEvent[], now: Date): TransactItem | undefined {
  return chargeRecordCarriesEvents(charge) ? undefined : outboxPut(events, now);
}

// --- The charge and its marker ---

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
