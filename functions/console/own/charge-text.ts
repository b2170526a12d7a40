/** A charge's state in a payer's words (Overview, Approvals). */
import type { Charge } from '../../core/charges';
import { timeLeft } from '../format';

export function chargeStatusText(charge: Charge, now: Date): string {
  switch (charge.status) {
    case 'SUCCESS':
      return charge.refundedAmount ? 'paid, partly or wholly refunded' : 'paid';
    case 'FAILED':
      return charge.failureReason ? `not paid: ${charge.failureReason}` : 'not paid';
    case 'EXPIRED':
      return 'expired: nothing was paid';
    case 'PENDING': {
      const left = charge.expiresAt ? ` (${timeLeft(Date.parse(charge.expiresAt) - now.getTime())} left)` : '';
      return charge.pendingReason === 'user_approval' ? `waits for your approval${left}` : `held for the agent's capture${left}`;
    }
  }
}
