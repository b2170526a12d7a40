/**
 * How a signed x402 purchase ends (DESIGN §22, docs/x402.md "Never both"): captured because its
 * transfer is on chain, or released because it can no longer land. The agent's receipt
 * (purchases.ts), the reconciler and the operator's resolve (purchase-reconcile.ts) all end it
 * here, so each is the same one transaction: `settlePending` with the `purchase` option, from the
 * charge as read (still PENDING, that `expiresAt`, a payment signed). Two at once: one commits, the
 * other's condition fails and it reads what won.
 */
import { purchaseView } from '../../contracts/views';
import type { Charge } from '../../core/charges';
import { ChargeNotPendingError } from '../../core/errors';
import { NOT_SETTLED } from '../../core/purchases';
import { sellerOf } from '../../core/statement';
import { refuse } from '../../messages/refusal';
import { pendingOf } from '../../store/charges/charge-pending.repository';
import { getCharge } from '../../store/charges/charge-read.repository';
import { settledCharge, settlePending } from '../../store/charges/charge-settlement.repository';
import { purchaseEvents } from '../events/events';

/** The seller, for the payer's statement row of what a release gives back. */
function sellerOnStatement(charge: Charge) {
  const seller = sellerOf(charge);
  return seller ? { seller } : {};
}

/** The purchase after an ending was tried, and whether this call's ending is the one that committed. */
export interface Ended {
  charge: Charge;
  won: boolean;
}

/** Ends a purchase whose transfer is on chain: captured, or (it failed there: the message can never land again) released. */
export function settleLanded(charge: Charge, transaction: string, err: unknown): Promise<Ended> {
  return err === null || err === undefined ? capture(charge, transaction) : expire(charge);
}

/** A purchase as its events show it: no receipt link, the event carries its signed `receipt` itself (DESIGN §27). */
const eventView = (charge: Charge) => purchaseView(charge, undefined);

/** SUCCESS: the hold becomes the payer's spend (no agent credited: the hot wallet's USDC left), with the transaction it landed under. */
export function capture(charge: Charge, transaction: string): Promise<Ended> {
  const now = new Date();
  const settlement = { kind: 'capture' as const, amount: charge.amount };
  const after = (c: Charge): Charge => {
    const settled = settledCharge(c, settlement, now);
    return { ...settled, ...(settled.purchase ? { purchase: { ...settled.purchase, transaction } } : {}) };
  };
  return settleOnce(charge, (c) =>
    settlePending(pendingOf(c), settlement, now, {
      purchase: { transaction, ...sellerOnStatement(c) },
      events: purchaseEvents(after(c), 'x402.purchase.succeeded', eventView, now),
    }),
  );
}

/** EXPIRED (`not settled by the seller`): the hold back to the payer. */
export function expire(charge: Charge): Promise<Ended> {
  const now = new Date();
  const settlement = { kind: 'return' as const, status: 'EXPIRED' as const, failureReason: NOT_SETTLED };
  return settleOnce(charge, (c) =>
    settlePending(pendingOf(c), settlement, now, {
      purchase: { ...sellerOnStatement(c) },
      events: purchaseEvents(settledCharge(c, settlement, now), 'x402.purchase.expired', eventView, now),
    }),
  );
}

/** Runs one ending from the charge as read; losing to another (the receipt, the reconciler, the operator at once) answers what won. */
async function settleOnce(charge: Charge, end: (c: Charge) => Promise<void>): Promise<Ended> {
  let won = true;
  try {
    await end(charge);
  } catch (error) {
    if (!(error instanceof ChargeNotPendingError)) throw error;
    won = false;
  }
  const now = await getCharge(charge.agentId, charge.id);
  if (!now) throw refuse('purchaseNotFound');
  return { charge: now, won };
}
