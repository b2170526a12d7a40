/**
 * PayPal takes money back from a credited top-up (docs/topups.md, reversals): a chargeback or
 * dispute lost (PAYMENT.CAPTURE.REVERSED) or a refund made in PayPal's dashboard
 * (PAYMENT.CAPTURE.REFUNDED). The webhook is verified like every PayPal webhook before this runs,
 * and even then only the refund id is taken from it: the refund — its status, amount and capture —
 * is read from PayPal. The payer's balance is debited up to the amount and the shortfall is owed
 * (no charge in that currency until a top-up pays it), in one transaction guarded once per refund
 * id (store/topups/reversal.repository.ts). Every reversal, and every one that cannot be applied, logs
 * `top-up reversed` for the TopupReversals alarm.
 */
import { ServiceBusyError } from '../../core/errors';
import { isCurrencyOn } from '../../core/money';
import { logger } from '../../observability/logger';
import { TOPUP_REVERSED_LOG_MESSAGE } from '../../observability/metric-names';
import { RailUnavailableError } from '../../rails/errors';
import { balanceOf, creditedPaypalCapture, reverseCredit } from '../../store/topups/reversal.repository';
import { paypalOrders } from './topup-credit';

/** The webhook events that take money back from a capture. */
export const REVERSAL_EVENTS: ReadonlySet<string> = new Set(['PAYMENT.CAPTURE.REVERSED', 'PAYMENT.CAPTURE.REFUNDED']);

/** A balance that keeps moving under the reversal (charges landing) is read again this often, then 503. */
const ATTEMPTS = 5;

/**
 * Applies the reversal a verified webhook names (`resource.id`: PayPal's refund id). Idempotent:
 * a duplicate delivery finds the guard and changes nothing. Throws RailUnavailableError (503, so
 * PayPal retries) while PayPal's refund is not final, ServiceBusyError while the balance will not
 * hold still.
 */
export async function reversePaypalCapture(
  eventType: string,
  resource: Record<string, unknown> | undefined,
  now = new Date(),
): Promise<void> {
  const refundId = typeof resource?.id === 'string' ? resource.id : undefined;
  if (!refundId) return;
  const alarm = (outcome: string, details: Record<string, unknown> = {}) =>
    logger().error(TOPUP_REVERSED_LOG_MESSAGE, { eventType, refundId, outcome, ...details });

  const refund = await paypalOrders().getRefund(refundId);
  if (!refund) return alarm('refund unknown to PayPal');
  if (refund.status === 'PENDING') throw new RailUnavailableError(`paypal refund ${refundId} is still PENDING`);
  if (refund.status !== 'COMPLETED') return; // CANCELLED / FAILED: nothing was taken back
  const captureId = refund.captureId;
  const credit = captureId ? await creditedPaypalCapture(captureId) : undefined;
  // A capture that was never credited (the top-up had expired or failed: recorded unmatched) costs
  // the payer nothing; the operator's record of it is what changed.
  if (!captureId || !credit) return alarm('capture was never credited', { captureId, amount: refund.amount });
  if (refund.amountMinor === undefined || !isCurrencyOn(credit.currency, 'paypal')) {
    return alarm('not in the credited currency', { captureId, amount: refund.amount, topupId: credit.topupId });
  }
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const balance = await balanceOf(credit.userId, credit.currency);
    if (balance === undefined) return alarm('payer is gone', { captureId, userId: credit.userId });
    const outcome = await reverseCredit({ refundId, captureId, eventType, credit, amount: refund.amountMinor, balance }, now);
    if (outcome.kind === 'already-reversed') return;
    if (outcome.kind === 'exceeds-credit') {
      return alarm('more than was credited', { captureId, amount: refund.amountMinor, credited: credit.amount, reversed: credit.reversed });
    }
    if (outcome.kind === 'reversed') {
      return alarm('reversed', {
        captureId,
        topupId: credit.topupId,
        userId: credit.userId,
        currency: credit.currency,
        amount: refund.amountMinor,
        debited: outcome.debited,
        owed: outcome.owed,
      });
    }
  }
  throw new ServiceBusyError();
}
