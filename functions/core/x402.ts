/**
 * x402 (DESIGN §17, docs/x402.md): the service is an x402 v2 facilitator for its agents, scheme
 * `exact` on Solana. A buyer's USDC transfer lands in the treasury and is credited to the settling
 * agent's USDC balance once per transaction signature. Pure: the settlement's states, the policy
 * the service adds to the stock scheme's checks, and the reasons a refusal carries.
 *
 * A settlement is keyed by its transaction signature (the fee payer's, which the hot wallet's
 * deterministic ed25519 signature fixes before anything is sent):
 *   PENDING   the agent's claim on the signature, written before the transaction is sent;
 *   CREDITED  the transaction confirmed and the amount was credited (one transaction, with the
 *             payment record, the idempotency record and the event);
 *   FAILED    the transaction failed on chain: it can never succeed, nothing was credited.
 * A PENDING claim whose process died is finished by a retry of the same settle or by the
 * reconciler, which both look the signature up on chain first.
 */
import { monotonicFactory } from 'ulid';
import { ApiError, DomainError } from './errors';
import type { Minor } from './money';

export const X402_VERSION = 2;
export const X402_SCHEME = 'exact';

export type SettlementStatus = 'PENDING' | 'CREDITED' | 'FAILED';

/** What the service knows of one payment, from the payload and requirements it was asked to settle. */
export interface X402Payment {
  /** The transaction signature (base58): the settlement's identity. */
  signature: string;
  agentId: string;
  /** Micro-USDC, the requirement's (= the transfer's, as the scheme checks) amount. */
  amount: Minor;
  /** The buyer's wallet (the transfer's authority). */
  payer: string;
  network: string;
  /** The resource the seller charged for (`paymentPayload.resource.url`), when given. */
  resource: string | null;
}

export interface X402Settlement extends X402Payment {
  status: SettlementStatus;
  createdAt: string;
  /** The listing's id of the credit (`x402_…`), once CREDITED. */
  paymentId?: string;
  creditedAt?: string;
  /** The SettleResponse given when it was credited (answered again to the same agent). */
  response?: string;
  /** The on-chain error of a FAILED one. */
  failure?: string;
}

/** A credited payment as the agent's listing shows it. */
export interface X402PaymentRecord {
  id: string;
  agentId: string;
  amount: Minor;
  payer: string;
  transaction: string;
  network: string;
  resource: string | null;
  createdAt: string;
}

/** Refusal reasons the service adds to the stock scheme's (x402's snake_case style). */
export const X402_REASONS = {
  recipientMismatch: 'invalid_exact_svm_payload_recipient_mismatch',
  mintMismatch: 'invalid_exact_svm_payload_mint_mismatch',
  networkMismatch: 'invalid_network',
  unsupportedScheme: 'unsupported_scheme',
  amountTooSmall: 'invalid_exact_svm_payload_amount_below_minimum',
  amountInvalid: 'invalid_exact_svm_payload_amount',
  /** The transaction was settled, or is being settled, for another agent. */
  settledByAnotherAgent: 'duplicate_settlement',
  /** The transaction failed on chain before (it can never succeed). */
  failedBefore: 'transaction_failed',
  /** Sent, but not confirmed yet: ask again (the reconciler also finishes it). */
  pending: 'settlement_pending',
} as const;

/** The claim on a signature is another agent's: that agent settles (or settled) this payment. */
export class SettlementClaimedError extends DomainError {
  constructor(readonly existing: X402Settlement) {
    super('x402 settlement is claimed already');
  }
}

/** The settlement was already credited (or failed) when this credit tried: nothing moved. */
export class SettlementNotPendingError extends DomainError {
  constructor() {
    super('x402 settlement is not pending');
  }
}

const ulid = monotonicFactory();
/** A payment id of the listing: `x402_` + a lower-case ULID (creation order). */
export const X402_PAYMENT_ID = /^x402_[0-9a-z]{26}$/;
export const newX402PaymentId = (now?: Date): string => `x402_${ulid(now?.getTime()).toLowerCase()}`;

/** The operator has not set the treasury or the fee payer's address (stage `x402PayTo`, `hotWalletAddress`) yet. */
export class X402UnavailableError extends ApiError {
  constructor() {
    super(503, 'x402 is not available yet', { 'retry-after': '3600' });
  }
}
