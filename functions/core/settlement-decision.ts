/**
 * What a settlement of a PENDING charge does (docs/lifecycle.md), decided from values alone: the
 * charge as read (its amount, what it waits for, whether it is a hold) and how it ends. Approve,
 * capture, decline, release and expiry are each one transaction (store/charges/settlement-items.ts builds
 * its items from this decision; store/charges/charge-settlement.repository.ts writes them): the held money
 * leaves `held`, `paid` goes to the agent's shard and `returned` back to the payer's balance (and
 * off the payer's and the grant's spend counters), `paid + returned` being all that was held. A
 * hold the payer approves only advances: it now waits for the agent's capture.
 */
import type { Charge, PendingReason } from './charges';
import type { Minor } from './money';

/** How a PENDING charge ends. */
export type Settlement =
  /** Approved by the user: SUCCESS, the held amount to the agent; a hold instead waits for its capture. */
  | { kind: 'approve' }
  /** Captured by the agent: SUCCESS for `amount` (≤ the held amount), the rest back to the user. */
  | { kind: 'capture'; amount: number; tab?: TabClose }
  /** Declined, released or expired: the hold back to the user. `awaiting`: only while it waits for that. */
  | { kind: 'return'; status: 'FAILED' | 'EXPIRED'; failureReason: string | null; awaiting?: PendingReason; tab?: TabClose };

/**
 * A tab's close (DESIGN §29, use-cases/tabs/tabs.ts): what was used was consumed under the hold
 * while the tab was open, so it is captured whenever the close comes (no clock: the tab's own
 * condition refused every use past `expiresAt`), whoever closes it, even once the payer blocked the
 * agent, the agent was disabled or the grant ended: that is what "closes at what was used before
 * the switch" means.
 */
export type TabClose = true;

/**
 * The charge as a settlement leaves it, for its webhook events and answers: approve → SUCCESS (a
 * hold: still PENDING, waiting for its capture from now), capture → SUCCESS for the captured
 * amount, return → FAILED/EXPIRED with its reason.
 */
export function settledCharge(charge: Charge, settlement: Settlement, now: Date): Charge {
  const { pendingReason: _reason, ...rest } = charge;
  if (settlement.kind === 'approve') {
    if (charge.holdSeconds !== undefined) {
      return { ...charge, pendingReason: 'capture', expiresAt: new Date(now.getTime() + charge.holdSeconds * 1000).toISOString() };
    }
    return { ...rest, status: 'SUCCESS' };
  }
  if (settlement.kind === 'capture') {
    return { ...rest, status: 'SUCCESS', amount: settlement.amount, authorizedAmount: charge.amount };
  }
  return { ...rest, status: settlement.status, ...(settlement.failureReason ? { failureReason: settlement.failureReason } : {}) };
}

/** What a settlement needs of the PENDING charge as read. */
export type SettledHold = Pick<Charge, 'amount' | 'holdSeconds'> & { pendingReason: PendingReason };

/** Whether a settlement is the sweeper's expiry. */
export const isExpiry = (s: Settlement): boolean => s.kind === 'return' && s.status === 'EXPIRED';

/** The pendingReason a settlement acts on (undefined: any). */
export function actsOn(settlement: Settlement): PendingReason | undefined {
  if (settlement.kind === 'approve') return 'user_approval';
  if (settlement.kind === 'capture') return 'capture';
  return settlement.awaiting;
}

/**
 * What the charge's condition requires besides the state it was read in:
 *   - `clock`: `due` (the sweeper: past its end), `open` (anyone else: not past it), or `chain`
 *     (an x402 purchase's own ending: the chain decides, not the clock);
 *   - `purchase`: `signed` (a purchase's own ending: its payment was signed), `none` (a capture, or
 *     a plain charge's approval, never touches a purchase), `unsigned` (any other settlement never
 *     ends a purchase whose payment may be on its way).
 */
export interface SettlementGuard {
  clock: 'due' | 'open' | 'chain' | 'any';
  purchase: 'signed' | 'none' | 'unsigned';
}

export type PendingSettlementDecision =
  /** It waits for something else: a capture before the payer approved, or the payer's decision on a hold already approved. */
  | { kind: 'refused'; reason: 'awaits-approval' | 'not-pending' }
  /** A hold the payer approves: it waits for the agent's capture until `expiresAt`; no money moves. */
  | { kind: 'advance'; guard: SettlementGuard; expiresAt: string }
  | {
      kind: 'end';
      guard: SettlementGuard;
      /** What leaves `held`: all of the charge. */
      held: Minor;
      /** To the agent's shard (never for a purchase: its money left by the hot wallet). */
      paid: Minor;
      /** Back to the payer's balance, and off the payer's and the grant's counters that counted it. */
      returned: Minor;
      /** Money goes to the agent: the grant must still be active (a purchase's transfer on chain is owed regardless). */
      paysAgent: boolean;
      /** A capture the payer's block refuses (a purchase's transfer on chain is owed regardless). */
      blockable: boolean;
    };

/**
 * How `settlement` ends (or advances) the PENDING charge `hold` as read at `now`. `purchase`: an
 * x402 purchase's own ending, on the chain's word (use-cases/x402-purchases/purchases.ts); no agent is paid.
 */
export function decidePendingSettlement(
  hold: SettledHold,
  settlement: Settlement,
  opts: { purchase: boolean; now: Date },
): PendingSettlementDecision {
  const { purchase, now } = opts;
  const tabClose = settlement.kind !== 'approve' && settlement.tab === true;
  const acts = actsOn(settlement);
  if (acts !== undefined && acts !== hold.pendingReason) {
    return { kind: 'refused', reason: settlement.kind === 'capture' ? 'awaits-approval' : 'not-pending' };
  }
  const guard: SettlementGuard = {
    clock: purchase ? 'chain' : tabClose ? 'any' : isExpiry(settlement) ? 'due' : 'open',
    purchase: purchase
      ? 'signed'
      : settlement.kind === 'capture' || (settlement.kind === 'approve' && hold.holdSeconds === undefined)
        ? 'none'
        : 'unsigned',
  };
  if (settlement.kind === 'approve' && hold.holdSeconds !== undefined) {
    return { kind: 'advance', guard, expiresAt: new Date(now.getTime() + hold.holdSeconds * 1000).toISOString() };
  }
  const paid = settlement.kind === 'approve' ? hold.amount : settlement.kind === 'capture' ? settlement.amount : 0;
  const capturing = settlement.kind === 'capture';
  return {
    kind: 'end',
    guard,
    held: hold.amount,
    paid,
    returned: hold.amount - paid,
    paysAgent: (capturing || settlement.kind === 'approve') && !purchase && !tabClose,
    blockable: capturing && !purchase && !tabClose,
  };
}
