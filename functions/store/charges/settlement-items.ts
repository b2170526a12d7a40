/**
 * The items of a settlement's ONE TransactWriteItems (approve, capture, decline, release, expiry,
 * an x402 purchase's capture or release), built in one place from the pure decision
 * (core/settlement-decision.ts `decidePendingSettlement`) and the charge as read: what each item
 * is, what its condition holds, and what a failure of that condition means (store/transact.ts
 * `named`). The repository (charge-settlement.repository.ts) only writes them, and writes them
 * again with the counters a failed round showed (`releaseBasis`, `grantReturnBasis`).
 *
 *   - `idempotency`, `agentKey` (the agent's own capture or release): its idempotency record; a
 *     release, which credits no shard, carries the agent item's kill switch (`agentEnabledCheck`);
 *   - `charge`: the charge, conditioned on the state it was read in (still PENDING with that
 *     `pendingReason` and `expiresAt`, the clock and the purchase as the decision's guard says):
 *     its new state, or (a hold the payer approves) its new `pendingReason` and deadline;
 *   - `payerRelease`: the user's item, the whole hold out of `held`, `returned` back to the
 *     balance and off the spend counters that counted it (`releaseUserUpdate`); a capture's is
 *     also conditioned on the payer not blocking the agent;
 *   - `marker`: the pending marker retired as a tombstone, or moved to the capture's deadline;
 *   - `agentShard`: one shard of the agent credited with `paid` (carrying the capture's key kill
 *     switch, or an approval's check for any key of the agent), or, for a hold's approval, only
 *     that check;
 *   - `grant`: the grant's give-back of `returned` (`grantSettleItem`), conditioned on the grant
 *     being active when money goes to the agent; a hold's approval only checks that;
 *   - `outbox`: the settlement's webhook events;
 *   - `statement`: the payer's statement entry of `returned` (`hold_release`), when anything came
 *     back to the balance (store/statement/statement-items.ts).
 *
 * The charge's own items (its condition, its marker) are built in settlement-charge-items.ts, the
 * payer's give-back in settlement-release.ts, the grant's in grant-settlement-items.ts.
 *
 * When several conditions fail, the charge's (`chargeMovedOn`, precedence 2) speaks first, then
 * the user's and the grant's (another round with the counters they show, or the payer's block,
 * or the grant's end), then the shard's cap (BalanceLimitError). The order of the items is what
 * the pinned transactions show (test/store/settlement-transaction.int.test.ts).
 */

import { config } from '../../config';
import { countedOf, type SpendCounted } from '../../core/charges';
import { AgentBlockedError } from '../../core/errors';
import type { OutboxEvent } from '../../core/events';
import type { IdempotencyWrite } from '../../core/idempotency';
import type { Minor } from '../../core/money';
import type { PendingSettlementDecision, Settlement } from '../../core/settlement-decision';
import type { Counterparty } from '../../core/statement';
import type { TabCloser } from '../../core/tabs';
import { outboxPut } from '../events/outbox';
import { idempotencyPut } from '../idempotency.repository';
import { agentEnabledCheck } from '../identity/agent.repository';
import { holdReleaseEntry, statementPut } from '../statement/statement-items';
import { keys } from '../table';
import { type TabSettlement, tabSettlementItems } from '../tabs/tab-items';
import { named, type OldItem, outcome, type TransactEntry, type TransactItem } from '../transact';
import { randomShard, shardCredit, shardEnabledCheck } from './balance.repository';
import { type PendingCharge, pendingChargeKey } from './charge-pending.repository';
import { grantInactiveError } from './grant-charge';
import { assumeGrantCounted, type GrantReturnBasis, grantSettleItem } from './grant-settlement-items';
import {
  approvedChargeUpdate,
  approvedMarkerUpdate,
  type ChargeSide,
  chargeGuard,
  chargeMovedOn,
  endedChargeUpdate,
  settledMarker,
} from './settlement-charge-items';
import { type ReleaseBasis, releaseUserUpdate } from './settlement-release';

/** A settlement to write: the decision, and what it was decided from. */
export interface SettlementWrite {
  pending: PendingCharge;
  settlement: Settlement;
  decision: Exclude<PendingSettlementDecision, { kind: 'refused' }>;
  /** What the caller believes of the payer's and the grant's counters (`assumeCounted` first, then what a failed round showed). */
  bases: { user: ReleaseBasis; grant: GrantReturnBasis };
  /** The agent's own capture or release: its key's hash and its idempotency record. */
  agent?: { keyHash: string; idem: IdempotencyWrite } | undefined;
  /** An x402 purchase's own ending: captured under this `transaction`, or released; `seller` names it on the statement. */
  purchase?: { transaction?: string; seller?: Counterparty } | undefined;
  events: readonly OutboxEvent[];
  now: Date;
  /** A tab's hold: who closes the tab (absent: judged from the settlement, `tabCloserOf`). */
  tab?: TabSettlement | undefined;
}

/** The user's or the grant's item refused giving money back: its counters are not as assumed. Retry with it. */
export interface CountersMoved {
  userItem?: OldItem;
  grantItem?: OldItem;
}

type Entry = TransactEntry<CountersMoved>;

/** A settlement's items, by what each one is. */
export interface SettlementItems {
  idempotency?: Entry;
  agentKey?: Entry;
  charge: Entry;
  payerRelease?: Entry;
  marker: TransactItem;
  agentShard?: Entry;
  grant?: Entry;
  outbox?: TransactItem;
  /** A tab's hold: the tab opened (an approval) or closed at what it used, and its entries (store/tabs/tab-items.ts). */
  tab?: Entry[];
  /** The payer's statement entry of what came back to the balance (`hold_release`), when anything did. */
  statement?: TransactItem;
}

/** The transaction of a settlement's items. */
export const settlementTransaction = (items: SettlementItems): Entry[] =>
  [
    items.idempotency,
    items.agentKey,
    items.charge,
    items.payerRelease,
    items.marker,
    items.agentShard,
    items.grant,
    items.outbox,
    ...(items.tab ?? []),
    items.statement,
  ].filter((item): item is Entry => item !== undefined);

type Decision = SettlementWrite['decision'];
type MoneyItems = Pick<SettlementItems, 'charge' | 'payerRelease' | 'marker' | 'agentShard' | 'grant' | 'statement'>;

/** A settlement's items, each with what its failed condition means. */
export function settlementItems(write: SettlementWrite): SettlementItems {
  const { pending, settlement, decision, agent, events, now } = write;
  const capture = settlement.kind === 'capture';
  // A capture credits a shard, which carries the key's kill switch; a release credits none: the agent item's.
  const killSwitch = agent && capture ? agent.keyHash : undefined;
  const own: Pick<SettlementItems, 'idempotency' | 'agentKey' | 'outbox' | 'tab'> = {
    ...(agent ? { idempotency: idempotencyPut(agent.idem, now) } : {}),
    ...(agent && !capture ? { agentKey: agentEnabledCheck(agent.keyHash) } : {}),
  };
  const outbox = outboxPut(events, now);
  if (outbox) own.outbox = outbox;

  const side: ChargeSide = {
    guard: chargeGuard(pending, decision.guard, now),
    key: pendingChargeKey(pending),
    markerKey: keys.pendingCharge(pending.chargeId),
    moved: { onConditionFailed: (old: OldItem | undefined) => chargeMovedOn(old, pending, settlement, now), precedence: 2 },
  };
  if (pending.tabId !== undefined) {
    const ids = { tabId: pending.tabId, userId: pending.userId, agentId: pending.agentId };
    own.tab = tabSettlementItems(ids, decision, write.tab?.closedBy ?? tabCloserOf(settlement), now);
  }
  if (decision.kind === 'advance') return { ...own, ...advanceItems(write, decision, side) };
  return { ...own, ...endingItems(write, decision, side, killSwitch) };
}

/** Who closes a tab whose hold ends by a path that does not say: the sweeper, the payer's decline, else the payer. */
function tabCloserOf(settlement: Settlement): TabCloser {
  if (settlement.kind === 'return' && settlement.status === 'EXPIRED') return 'expiry';
  if (settlement.kind === 'return' && settlement.awaiting === 'user_approval') return 'declined';
  return 'payer';
}

/** A hold the user approves: it now waits for the agent's capture, from now on; no money moves. */
function advanceItems(write: SettlementWrite, decision: Extract<Decision, { kind: 'advance' }>, side: ChargeSide): MoneyItems {
  const { pending, now } = write;
  const { expiresAt } = decision;
  const grantCheck =
    pending.grantId === undefined
      ? undefined
      : grantSettleItem({ userId: pending.userId, grantId: pending.grantId }, 0, countedOf(pending), assumeGrantCounted, {
          activeAt: now,
        });
  return {
    charge: named(approvedChargeUpdate(side, expiresAt, now), side.moved),
    marker: approvedMarkerUpdate(side, pending.chargeId, expiresAt),
    // What an approval of a hold (no shard credited, no grant counter moved) must still find true:
    // the agent enabled (one shard's kill switch, for any key) and the grant it was made under
    // active. After the charge's own condition, which speaks first on a tie.
    agentShard: shardEnabledCheck(pending.agentId, randomShard(), PAYER_SIDE_KILL_SWITCH),
    ...(grantCheck ? { grant: named(grantCheck, { onConditionFailed: (old) => grantInactiveError(old, now), precedence: 1 }) } : {}),
  };
}

/** A settlement that ends the charge: money to the agent (`paid`), back to the payer (`returned`), or both. */
function endingItems(
  write: SettlementWrite,
  decision: Extract<Decision, { kind: 'end' }>,
  side: ChargeSide,
  killSwitch: string | undefined,
): MoneyItems {
  const { pending, settlement, purchase, now } = write;
  const counted = countedOf(pending);
  const { paid, returned, paysAgent, blockable } = decision;
  const chargeUpdate = endedChargeUpdate(side, { pending, settlement, purchase, paid, now });
  const userUpdate = payerReleaseUpdate(write, counted, returned, blockable);
  // A purchase pays no agent: its money left by the hot wallet (docs/x402.md, the wallet's equation).
  const creditsAgent = !purchase && (paid > 0 || killSwitch !== undefined);
  // The agent's capture carries its own key's kill switch; a payer's approval, the switch for any key of the agent.
  const shardGuard =
    killSwitch !== undefined
      ? { killSwitch }
      : settlement.kind === 'approve'
        ? { enabledAgent: { precedence: PAYER_SIDE_KILL_SWITCH } }
        : {};
  // Money to the agent (a capture, an approval) only while the grant is active. A purchase's
  // transfer, once on chain, is captured even if the grant ended since it was signed.
  const grantItem =
    pending.grantId === undefined
      ? undefined
      : grantSettleItem({ userId: pending.userId, grantId: pending.grantId }, returned, counted, write.bases.grant, {
          ...(paysAgent ? { activeAt: now } : {}),
        });
  return {
    charge: named(chargeUpdate, side.moved),
    // Money going back is conditioned on the counters, a capture on the agent not being blocked; else a failure is never expected.
    payerRelease:
      returned > 0 || blockable
        ? named(userUpdate, {
            onConditionFailed: (old) => {
              if (blockable && isBlocked(old, pending.agentId)) return new AgentBlockedError();
              return old && returned > 0 ? outcome({ userItem: old }) : undefined;
            },
            precedence: 1,
          })
        : userUpdate,
    marker: settledMarker(side.markerKey, now),
    // What came back to the available balance (a release, decline, expiry, a capture's rest): its statement entry.
    ...(returned > 0
      ? { statement: statementPut(holdReleaseEntry(pending, returned, endedStatus(settlement), now, purchase?.seller)) }
      : {}),
    ...(creditsAgent ? { agentShard: shardCredit(pending.agentId, randomShard(), pending.currency, paid, shardGuard) } : {}),
    ...(grantItem
      ? {
          grant: named(grantItem, {
            onConditionFailed: (old) => {
              // Revoked or ended since the charge was made (DESIGN §16, docs/grants.md).
              const inactive = paysAgent ? grantInactiveError(old, now) : undefined;
              if (inactive) return inactive;
              return old && returned > 0 ? outcome({ grantItem: old }) : undefined;
            },
            precedence: 1,
          }),
        }
      : {}),
  };
}

/** The user's item: the hold out of `held`, `returned` back; a blockable capture also refused while the payer blocks the agent. */
function payerReleaseUpdate(write: SettlementWrite, counted: SpendCounted, returned: Minor, blockable: boolean): TransactItem {
  const { pending } = write;
  const release = releaseUserUpdate({ ...pending, counted }, write.bases.user, returned);
  return {
    Update: {
      TableName: config().TABLE_NAME,
      Key: keys.user(pending.userId),
      ...release,
      ...(blockable
        ? {
            // A capture after the payer blocked the agent is refused (DESIGN §16): by this condition, not a read.
            ConditionExpression: `${release.ConditionExpression} AND (attribute_not_exists(policy.agents.#blk.blocked) OR policy.agents.#blk.blocked <> :blocked)`,
            ExpressionAttributeNames: { ...release.ExpressionAttributeNames, '#blk': pending.agentId },
            ExpressionAttributeValues: { ...release.ExpressionAttributeValues, ':blocked': true },
          }
        : {}),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** The charge's status once this settlement ended it: SUCCESS for a capture or approval, else the return's. */
const endedStatus = (settlement: Settlement): string => (settlement.kind === 'return' ? settlement.status : 'SUCCESS');

/**
 * The payer's kill switch ranks with the charge's own condition and after it (the item written
 * earlier speaks on a tie): a payer who lost a race is told so, and an approval that would pay a
 * disabled agent is refused as AgentDisabledError.
 */
const PAYER_SIDE_KILL_SWITCH = 2;

/** Whether the user item `old` shows the payer's policy blocking `agentId`. */
function isBlocked(old: OldItem | undefined, agentId: string): boolean {
  const agents = (old?.policy as { agents?: Record<string, { blocked?: unknown }> } | undefined)?.agents;
  return agents?.[agentId]?.blocked === true;
}
