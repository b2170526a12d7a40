/**
 * x402 (DESIGN §17, docs/x402.md): the service is an x402 v2 facilitator for its agents, scheme
 * `exact` on Solana. A buyer's USDC transfer lands in the treasury and is credited, once, to the
 * USDC balance of the agent it names (its seller memo). Pure: the settlement's states, the policy
 * the service adds to the stock scheme's checks, and the reasons a refusal carries.
 *
 * A settlement is keyed by its transaction's message hash (sha256 of the message bytes: computable
 * from the payload without any key, so verify finds it too) and records the transaction signature
 * (the fee payer's: the hot wallet signs only a message that passed every check, and its
 * deterministic ed25519 signature is the one the transaction lands under):
 *   PENDING   the agent's claim on the payment, written after every check and before the send;
 *   CREDITED  the transaction confirmed and the amount was credited (one transaction, with the
 *             payment record, the idempotency record and the event);
 *   FAILED    the transaction failed on chain: it can never succeed, nothing was credited.
 * A PENDING claim whose process died is finished by a retry of the same settle or by the
 * reconciler, which both look the signature up on chain first.
 */
import { monotonicFactory } from 'ulid';
import { Refusal } from '../messages/refusal';
import { DomainError } from './errors';
import type { Minor } from './money';

export const X402_VERSION = 2;
export const X402_SCHEME = 'exact';

export type SettlementStatus = 'PENDING' | 'CREDITED' | 'FAILED';

/** What the service knows of one payment, from the payload and requirements it was asked to settle. */
export interface X402Payment {
  /**
   * sha256 (hex) of the transaction's message bytes: the settlement's identity. One message is one
   * payment: it names the fee payer, so only the hot wallet's signature lands it, under one signature.
   */
  messageHash: string;
  /** The transaction signature (base58), the fee payer's: what the chain knows it by. */
  signature: string;
  agentId: string;
  /** Micro-USDC, the requirement's (= the transfer's, as the scheme checks) amount. */
  amount: Minor;
  /** The buyer's wallet (the transfer's authority). */
  payer: string;
  network: string;
  /** The resource the seller charged for (`paymentPayload.resource.url`), when given. */
  resource: string | null;
  /** Lamports the transaction costs the fee payer once it lands (base fee and priority fee), when known. */
  feeLamports?: number;
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
  /** What its refunds took back so far (DESIGN §28; absent: none), FAILED refunds given back. */
  refunded?: Minor;
}

/** Refusal reasons the service adds to the stock scheme's (x402's snake_case style). */
export const X402_REASONS = {
  recipientMismatch: 'invalid_exact_svm_payload_recipient_mismatch',
  mintMismatch: 'invalid_exact_svm_payload_mint_mismatch',
  networkMismatch: 'invalid_network',
  unsupportedScheme: 'unsupported_scheme',
  amountTooSmall: 'invalid_exact_svm_payload_amount_below_minimum',
  amountInvalid: 'invalid_exact_svm_payload_amount',
  /** The requirements do not carry the authenticated agent's seller memo (`extra.memo`). */
  sellerMemo: 'invalid_seller_memo',
  /** The transaction was settled, or is being settled, for another agent. */
  settledByAnotherAgent: 'duplicate_settlement',
  /** The transaction failed on chain before (it can never succeed). */
  failedBefore: 'transaction_failed',
  /** Sent, but not confirmed yet: ask again (the reconciler also finishes it). */
  pending: 'settlement_pending',
} as const;

/** The claim on a payment is another agent's (or this one's, in a race): that agent settles (or settled) it. */
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

/**
 * The memo that names an agent as the seller of a payment: the seller puts it in its middleware's
 * `extra.memo`, the stock client writes it into the transaction's memo instruction, and the stock
 * scheme checks the transaction carries exactly it. Verify and settle accept only the
 * authenticated agent's, so a payment made for one agent cannot be settled (or verified) by another.
 */
export const x402SellerMemo = (agentId: string): string => `x402:${agentId}`;

const ulid = monotonicFactory();
/** A payment id of the listing: `x402_` + a lower-case ULID (creation order). */
export const X402_PAYMENT_ID = /^x402_[0-9a-z]{26}$/;
export const newX402PaymentId = (now?: Date): string => `x402_${ulid(now?.getTime()).toLowerCase()}`;

/**
 * A `payment-identifier` (the x402 extension, `@x402/extensions`) an agent was already asked about
 * with another payment: the identifier names one payment per seller, and nothing is verified,
 * settled or credited for the other.
 */
export class PaymentIdentifierConflictError extends Refusal<'paymentIdentifierConflict'> {
  constructor() {
    super('paymentIdentifierConflict', []);
  }
}

/** The operator has not set the treasury or the fee payer's address (stage `x402PayTo`, `hotWalletAddress`) yet. */
export class X402UnavailableError extends Refusal<'x402Unavailable'> {
  constructor() {
    super('x402Unavailable', []);
  }
}
