/**
 * What the x402 facilitator (DESIGN §17) does to the table, by repository operation: settlements,
 * the payments they credit and the payment identifiers. Spread into functions/store/access.ts
 * `STORE` (which checks them as grants), where every function's grant is written from these names.
 */
export const X402_FACILITATOR_STORE = {
  // x402 settlements (x402.repository.ts): the claim on a payment (its old item comes back with a
  // lost condition, else it is read; settle and verify read it first), the one credit transaction,
  // the end of one that failed on chain.
  claimX402Settlement: { write: ['x402Settlement'] },
  getX402Settlement: { read: ['x402Settlement'] },
  /** With the cross-rail credit-once guard (chainCreditGuard). */
  creditX402Settlement: { write: ['x402Settlement', 'agentBalanceShard', 'x402Payment', 'idempotency', 'outbox', 'chainCredit'] },
  failX402Settlement: { write: ['x402Settlement'] },
  /** The reconciler moves a settlement it leaves PENDING to the back of its list (x402.repository.ts). */
  deferX402Settlement: { write: ['x402Settlement'] },
  listX402Payments: { read: ['x402Payment'] },
  /** One credited payment by id (its receipt: store/receipts). */
  getX402Payment: { read: ['x402Payment'] },
  /** A payment identifier bound to its payment, and the first verify answer kept on it (x402-payment-identifier.repository.ts). */
  bindX402PaymentIdentifier: { read: ['x402PaymentIdentifier'], write: ['x402PaymentIdentifier'] },
  listStaleX402: { query: ['x402Pending'] },
  /** The second check at `finalized` (x402.repository.ts listUnfinalizedSettlements, endFinalityCheck). */
  checkX402Finality: { query: ['x402Unfinalized'], write: ['x402Settlement'] },
} as const;
