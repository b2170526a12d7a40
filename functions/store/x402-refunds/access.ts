/**
 * What the refunds of x402 payments do to the table (DESIGN §28), by repository operation: spread
 * into functions/store/access.ts `STORE` (which checks them as grants), where every function's grant is
 * written from these names.
 */
export const X402_REFUND_STORE = {
  /** The refund (x402-refund.repository.ts): read from the shards and the payment; no kill-switch check, no lock. */
  commitX402Refund: {
    read: ['agentBalanceShard', 'x402Payment'],
    write: ['agentBalanceShard', 'x402Refund', 'x402Payment', 'idempotency'],
  },
  getX402Refund: { read: ['x402Refund'] },
  /** The payout lease and reconciler on a refund (`xr…` ids, keys.payout); a FAILED one gives back off its payment's `refunded`. */
  x402RefundPayouts: { read: ['x402Refund'], write: ['x402Refund', 'x402Payment'] },
} as const;
