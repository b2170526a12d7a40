/**
 * Crediting top-ups, shared by the watcher (both rails) and the PayPal webhook. Every credit goes
 * through `creditOnce`, one TransactWriteItems (store/topups/topup-completion.repository.ts `completeTopup`) guarded
 * by the signature / capture id, so the same payment seen twice, by two watchers, or by the
 * webhook and a poll at once is credited exactly once. Nothing here keeps state between steps: a
 * process dying anywhere is finished by the next run from what the rail and the table say.
 */
import { config, onConfigReset } from '../../config';
import { topupView } from '../../contracts/views';
import { TransferCreditedElsewhereError } from '../../core/chain-credits';
import { BalanceLimitError } from '../../core/errors';
import {
  PaymentAlreadyCreditedError,
  TOPUP_FAILURE_REASONS,
  type Topup,
  type TopupFailureReason,
  TopupNotPendingError,
  type TopupPayment,
  type UnmatchedReason,
  type UsdTopup,
} from '../../core/topups';
import { logger } from '../../observability/logger';
import { TOPUP_FAILED_LOG_MESSAGE, UNMATCHED_LOG_MESSAGE } from '../../observability/metric-names';
import { captureOf, type OrderCapture, PaypalOrders } from '../../rails/paypal.orders';
import { completeTopup, expireTopup, failTopup } from '../../store/topups/topup-completion.repository';
import { recordUnmatched } from '../../store/topups/topup-watch.repository';
import { topupCompletedEvents } from '../events/events';

let orders: PaypalOrders | undefined;
/** The container's Orders v2 client (its OAuth token cached on it). */
export function paypalOrders(): PaypalOrders {
  orders ??= new PaypalOrders();
  return orders;
}
onConfigReset(() => {
  orders = undefined;
});

/**
 * What came of one credit attempt. `credited-elsewhere`: an x402 settlement credited the same
 * Solana transaction (store/topups/chain-credit.ts), so it credits no top-up and is no one's unmatched money.
 */
export type CreditOutcome = 'credited' | 'already-credited' | 'credited-elsewhere' | 'not-pending' | 'balance-limit';

/** Credits `payment` to `topup` and completes it, at most once per payment. */
export async function creditOnce(topup: Topup, payment: TopupPayment, now = new Date()): Promise<CreditOutcome> {
  try {
    // topup.completed to the user, with the top-up as the API shows it once completed.
    const completed: Topup = {
      ...topup,
      status: 'COMPLETED',
      amount: payment.amount,
      externalId: payment.externalId,
      completedAt: now.toISOString(),
    };
    await completeTopup(topup, payment, now, topupCompletedEvents(topup.userId, topupView(completed), now));
    logger().info('top-up completed', {
      topupId: topup.id,
      userId: topup.userId,
      currency: payment.currency,
      externalId: payment.externalId,
    });
    return 'credited';
  } catch (error) {
    if (error instanceof PaymentAlreadyCreditedError) return 'already-credited';
    if (error instanceof TransferCreditedElsewhereError) return 'credited-elsewhere';
    if (error instanceof TopupNotPendingError) return 'not-pending';
    if (error instanceof BalanceLimitError) return 'balance-limit';
    throw error;
  }
}

/** The log line operators' alarms count (lib/monitoring.ts): money arrived that credits no top-up. */
export { UNMATCHED_LOG_MESSAGE };

/** How long after `expiresAt` a PENDING top-up is still looked at before it expires: a capture or
 * a transfer in flight at the deadline lands well within it. */
export const EXPIRY_GRACE_MS = 5 * 60_000;

/**
 * Drives a PENDING PayPal top-up from what PayPal says about its order: APPROVED → capture
 * (PayPal-Request-Id = the top-up, so a retry returns the same capture) → credit once per capture
 * id; COMPLETED (captured by a run that died before crediting) → credit that capture; VOIDED, a
 * declined capture, or never approved by `expiresAt` + grace → EXPIRED with nothing credited.
 * A capture in another currency, or one still PENDING TOPUP_CAPTURE_PENDING_MAX_SECONDS after the
 * window, → FAILED with its reason, alarmed (never polled forever).
 * Called by the webhook (on CHECKOUT.ORDER.APPROVED) and by the watcher (polling); safe to race.
 */
export async function settlePaypalTopup(topup: UsdTopup, now = new Date()): Promise<Topup['status']> {
  const order = await paypalOrders().get(topup.orderId);
  const expired = now.getTime() > Date.parse(topup.expiresAt);
  const pastGrace = now.getTime() > Date.parse(topup.expiresAt) + EXPIRY_GRACE_MS;
  let capture: OrderCapture | undefined;
  if (order?.status === 'COMPLETED') {
    capture = captureOf(order);
  } else if (order?.status === 'APPROVED') {
    // Not captured after the deadline: the top-up may already be expiring, and money taken then
    // would have no PENDING top-up to credit.
    if (expired) return pastGrace && (await expireTopup(topup, now)) ? 'EXPIRED' : 'PENDING';
    const captured = await paypalOrders().capture(topup.orderId, topup.id);
    if ('refused' in captured) {
      logger().warn('paypal refused the capture', { topupId: topup.id, issue: captured.refused });
      return 'PENDING';
    }
    capture = captured;
  } else if (order?.status === 'VOIDED') {
    return (await expireTopup(topup, now)) ? 'EXPIRED' : 'PENDING';
  } else {
    // CREATED / PAYER_ACTION_REQUIRED / SAVED, or unknown to PayPal: wait for the payer until the deadline.
    return pastGrace && (await expireTopup(topup, now)) ? 'EXPIRED' : 'PENDING';
  }
  if (!capture) return 'PENDING';
  if (capture.status === 'DECLINED' || capture.status === 'FAILED') {
    return (await expireTopup(topup, now)) ? 'EXPIRED' : 'PENDING';
  }
  if (capture.status === 'COMPLETED' && capture.amountMinor === undefined) {
    // Money taken in a currency the top-up does not hold: never credited, recorded for an operator.
    await recordPaypalUnmatched(topup, capture, 'wrong currency', now);
    return failPaypalTopup(topup, capture, TOPUP_FAILURE_REASONS.otherCurrency, now);
  }
  if (capture.status !== 'COMPLETED' || capture.amountMinor === undefined) {
    // A PENDING capture: PayPal settles it later (a review, an eCheck), but not forever.
    const waitedOut = now.getTime() > Date.parse(topup.expiresAt) + EXPIRY_GRACE_MS + config().TOPUP_CAPTURE_PENDING_MAX_SECONDS * 1000;
    return waitedOut ? failPaypalTopup(topup, capture, TOPUP_FAILURE_REASONS.capturePending, now) : 'PENDING';
  }
  const outcome = await creditOnce(topup, { rail: 'PAYPAL', externalId: capture.id, amount: capture.amountMinor, currency: 'USD' }, now);
  if (outcome === 'credited' || outcome === 'already-credited') return 'COMPLETED';
  // Captured, but the top-up can no longer take it (expired or failed meanwhile, or the balance
  // is full): the money is at the platform, so an operator must refund or credit it by hand.
  await recordPaypalUnmatched(topup, capture, outcome === 'balance-limit' ? 'balance limit' : 'expired reference', now);
  return outcome === 'not-pending' ? 'EXPIRED' : 'PENDING';
}

/**
 * A capture that completed after its top-up FAILED for waiting too long (PayPal's
 * PAYMENT.CAPTURE.COMPLETED): the money is at the platform and credits nobody, so it is recorded
 * unmatched for an operator (once). Nothing for any other top-up.
 */
export async function recordLateCapture(topup: UsdTopup, now = new Date()): Promise<void> {
  if (topup.status !== 'FAILED' || topup.failureReason !== TOPUP_FAILURE_REASONS.capturePending) return;
  const order = await paypalOrders().get(topup.orderId);
  const capture = order ? captureOf(order) : undefined;
  if (capture?.status === 'COMPLETED') await recordPaypalUnmatched(topup, capture, 'top-up failed', now);
}

/** PENDING → FAILED for `reason`, alarmed (the `top-up failed` log line is the metric). */
async function failPaypalTopup(topup: UsdTopup, capture: OrderCapture, reason: TopupFailureReason, now: Date): Promise<Topup['status']> {
  if (!(await failTopup(topup, { failureReason: reason, externalId: capture.id }, now))) return 'PENDING';
  logger().error(TOPUP_FAILED_LOG_MESSAGE, {
    topupId: topup.id,
    userId: topup.userId,
    orderId: topup.orderId,
    captureId: capture.id,
    captureStatus: capture.status,
    amount: capture.amount,
    reason,
  });
  return 'FAILED';
}

/** Records a PayPal capture that credits no top-up (`PAYPAL-<captureId>`), logged once for the alarm. */
async function recordPaypalUnmatched(topup: UsdTopup, capture: OrderCapture, reason: UnmatchedReason, now: Date): Promise<void> {
  const recorded = await recordUnmatched(
    {
      signature: `PAYPAL-${capture.id}`,
      reason,
      amount: capture.amountMinor !== undefined ? String(capture.amountMinor) : (capture.amount?.value ?? '0'),
      mint: capture.amount?.currency ?? 'USD',
      topupId: topup.id,
      userId: topup.userId,
      slot: 0,
    },
    now,
  );
  if (recorded) logger().error(UNMATCHED_LOG_MESSAGE, { rail: 'PAYPAL', captureId: capture.id, topupId: topup.id, reason });
}
