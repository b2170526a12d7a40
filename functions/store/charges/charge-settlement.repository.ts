/**
 * How a PENDING charge ends (docs/lifecycle.md): approved, captured, declined, released or
 * expired, each ONE TransactWriteItems from the state the charge was read in. What it does is
 * decided by core/settlement-decision.ts; its items (the charge's new state, the user's held
 * money to the agent's shard or back to the balance, the marker retired, the grant's give-back,
 * an agent's idempotency record and kill switch, the outbox) are built by store/charges/settlement-items.ts;
 * this writes them, and again with the counters a failed round showed.
 */
import { countedOf } from '../../core/charges';
import { ChargeAwaitsApprovalError, ChargeNotPendingError, StaleReadError } from '../../core/errors';
import type { OutboxEvent } from '../../core/events';
import type { IdempotencyWrite } from '../../core/idempotency';
import { decidePendingSettlement, type Settlement, settledCharge } from '../../core/settlement-decision';
import type { Counterparty } from '../../core/statement';
import type { TabSettlement } from '../tabs/tab-items';
import { transactWrite } from '../transact';
import type { PendingCharge } from './charge-pending.repository';
import { assumeGrantCounted, type GrantReturnBasis, grantReturnBasis } from './grant-settlement-items';
import { settlementItems, settlementTransaction } from './settlement-items';
import { assumeCounted, type ReleaseBasis, releaseBasis } from './settlement-release';

export { type Settlement, settledCharge };

/** What goes with a settlement's transaction. */
export interface SettleOptions {
  /**
   * The agent's own capture or release (store/charges/charge-lifecycle.repository.ts): its key's hash (the
   * credited shard's copy of the kill switch for a capture, the agent item's for a release) and its
   * idempotency record, in the same transaction.
   */
  agent?: { keyHash: string; idem: IdempotencyWrite };
  /** The settlement's webhook events (built from `settledCharge`), written LAST. */
  events?: readonly OutboxEvent[];
  /**
   * An x402 purchase's own ending (use-cases/x402-purchases/purchases.ts): captured because its transfer is on
   * chain (`transaction`), or released because it can no longer land. Only this ends a purchase whose
   * payment was signed, whatever its `expiresAt` says (the chain decides, not the clock), and no
   * agent is credited: the money left by the hot wallet. Every other settlement is refused such a
   * purchase by its condition, and any capture any purchase.
   */
  purchase?: { transaction?: string; seller?: Counterparty };
  /** A tab's close: who closes it (store/tabs/tab-items.ts); every settlement of a tab's hold moves the tab. */
  tab?: TabSettlement;
}

/**
 * Ends (or, for a hold the user approves, advances) a PENDING charge in one transaction: the
 * charge's new state, the user's held money (to the agent's shard on approval or capture, back to
 * the balance otherwise, lowering the spend counters that counted what went back), and the marker
 * retired. A hold the user approves only changes state: it now waits for the agent's capture, for
 * `holdSeconds` from the approval.
 *
 * The charge's condition is the state `pending` was read in: still PENDING with that
 * `pendingReason` and that `expiresAt` (and, unless it expires, not past it). So a transition
 * commits only from the state its caller saw, and the charge it leaves is exactly
 * `settledCharge(<the charge as read>, settlement, now)`: callers answer with that, never with a
 * read-back that another transition may already have moved on. Throws ChargeNotPendingError (with
 * the status it has now; EXPIRED when past `expiresAt`) when it lost to another settlement or may
 * no longer act, ChargeAwaitsApprovalError for a capture before the user approved, and
 * StaleReadError when the charge is still PENDING but moved on in a way this settlement still
 * applies to (a hold the user approved meanwhile, for a release): read again and retry.
 */
export async function settlePending(pending: PendingCharge, settlement: Settlement, now: Date, opts: SettleOptions = {}): Promise<void> {
  const { agent, events = [], purchase, tab } = opts;
  const decision = decidePendingSettlement(pending, settlement, { purchase: purchase !== undefined, now });
  if (decision.kind === 'refused') {
    throw decision.reason === 'awaits-approval' ? new ChargeAwaitsApprovalError() : new ChargeNotPendingError('PENDING');
  }
  const counted = countedOf(pending);
  const returned = decision.kind === 'end' ? decision.returned : 0;
  let user: ReleaseBasis = assumeCounted(counted);
  let grant: GrantReturnBasis = assumeGrantCounted;
  // Three rounds at most: then with the spend periods the user's item, and the grant's, showed.
  for (let round = 0; round < 3; round++) {
    const items = settlementItems({ pending, settlement, decision, bases: { user, grant }, agent, purchase, events, now, tab });
    const result = await transactWrite(settlementTransaction(items));
    if (result.committed) return;
    const { userItem, grantItem } = result.outcome;
    if (userItem) user = releaseBasis(userItem, { ...pending, counted }, returned);
    if (grantItem) grant = grantReturnBasis(grantItem, counted, returned);
  }
  throw new StaleReadError('user spend counters');
}
