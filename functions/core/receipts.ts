/**
 * Receipts (DESIGN §27, docs/receipts.md): a signed view of one settled money movement, made after
 * the fact from its stored record, never in the movement's own transaction. Pure: which records are
 * settled, the payload each one signs to, and the receipt id of each movement. The signature itself
 * (ES256, a KMS key on AWS, a key file locally) is functions/receipts/.
 *
 * A receipt's id is the movement's own id (a charge `c…`, a purchase `xp…`, an x402 payment
 * `x402_…`, a refund of one `xr…`, a payout `p…`, a top-up `t…`); a charge's refunds have one
 * receipt, `<chargeId>.refund`: the service keeps no record per refund of a charge (the charge's
 * cumulative `refundedAmount` and the `refundedAt` of the latest is the record, docs/lifecycle.md),
 * so that receipt states the total refunded as of the latest refund, and a later partial refund
 * makes a new one under the same id. A refund of an x402 payment is a record of its own (a payout
 * with `paymentId`, DESIGN §28), so each has its own receipt under its own `xr…` id.
 */
import type { Charge } from './charges';
import { formatAmount, type Minor } from './money';
import type { Payout } from './payouts';
import type { Topup } from './topups';
import type { X402PaymentRecord } from './x402';

export const RECEIPT_TYPES = ['charge', 'x402_purchase', 'x402_payment', 'refund', 'payout', 'topup'] as const;
export type ReceiptType = (typeof RECEIPT_TYPES)[number];

/** Who paid or was paid: a payer's account, an agent, a payer's prepaid balance, or an outside Solana wallet or PayPal receiver. */
export type PartyKind = 'user' | 'agent' | 'balance' | 'solana' | 'paypal';
export interface Party {
  kind: PartyKind;
  id: string;
}

/** The payload a receipt signs, exactly (DESIGN §27): every amount a decimal string. */
export interface ReceiptPayload {
  v: 1;
  type: ReceiptType;
  id: string;
  amount: string;
  currency: string;
  payer: Party;
  payee: Party;
  status: string;
  settledAt: string;
  grantId?: string;
  transaction?: string;
  resource?: string;
  /** When the receipt was signed (seconds since the epoch, as JWT's `iat`). */
  iat: number;
}

/** The payload before it is signed: everything but `iat`. */
export type ReceiptFacts = Omit<ReceiptPayload, 'iat'>;

/** The receipt id suffix of a charge's refunds. */
export const REFUND_RECEIPT_SUFFIX = '.refund';
/** The prefix of a refund of an x402 payment's id (core/ids.ts `newX402RefundId`): its own receipt id. */
const X402_REFUND_ID_PREFIX = 'xr';
/**
 * The receipt id of a refund: `<chargeId>.refund` for a charge's refunds (one receipt, the total), a
 * refund of an x402 payment's own `xr…` id unchanged (one receipt each), so `receiptUrlOf('refund', id)`
 * links either.
 */
export const refundReceiptId = (refundOf: string): string =>
  refundOf.startsWith(X402_REFUND_ID_PREFIX) ? refundOf : `${refundOf}${REFUND_RECEIPT_SUFFIX}`;
/** The charge id of a refund's receipt id; undefined for any other id. */
export const chargeIdOfRefundReceipt = (id: string): string | undefined =>
  id.endsWith(REFUND_RECEIPT_SUFFIX) ? id.slice(0, -REFUND_RECEIPT_SUFFIX.length) : undefined;

/**
 * A charge's record as the receipt reads it: the Charge, and the item's settlement and refund times
 * (never shown in the charge's answers).
 */
export interface SettledChargeRecord {
  charge: Charge;
  /** When a held charge was captured (absent: it succeeded when made, at createdAt). */
  settledAt?: string;
  /** When the latest refund was made. */
  refundedAt?: string;
}

const amountText = (minor: Minor, currency: Charge['currency']) => formatAmount(minor, currency);

/**
 * The receipt of a charge (type `charge`) or of an x402 purchase (`x402_purchase`, its `xp…` id),
 * once captured (SUCCESS); undefined while it is not settled. `publicId` is the id the caller
 * knows it by.
 */
export function chargeReceiptFacts(record: SettledChargeRecord, publicId: string): ReceiptFacts | undefined {
  const { charge } = record;
  if (charge.status !== 'SUCCESS') return undefined;
  const purchase = charge.purchase;
  return {
    v: 1,
    type: purchase ? 'x402_purchase' : 'charge',
    id: publicId,
    amount: amountText(charge.amount, charge.currency),
    currency: charge.currency,
    payer: { kind: 'user', id: charge.userId },
    payee: purchase ? { kind: 'solana', id: purchase.requirements.payTo } : { kind: 'agent', id: charge.agentId },
    status: charge.status,
    settledAt: record.settledAt ?? charge.createdAt,
    ...(charge.grantId !== undefined ? { grantId: charge.grantId } : {}),
    ...(purchase?.transaction !== undefined ? { transaction: purchase.transaction } : {}),
    ...(purchase?.resource ? { resource: purchase.resource.url } : {}),
  };
}

/** The receipt of a charge's refunds (type `refund`): the total refunded so far; undefined before any. */
export function refundReceiptFacts(record: SettledChargeRecord): ReceiptFacts | undefined {
  const { charge } = record;
  const refunded = charge.refundedAmount ?? 0;
  if (charge.purchase || refunded <= 0) return undefined;
  return {
    v: 1,
    type: 'refund',
    id: refundReceiptId(charge.id),
    amount: amountText(refunded, charge.currency),
    currency: charge.currency,
    payer: { kind: 'agent', id: charge.agentId },
    payee: { kind: 'user', id: charge.userId },
    status: 'COMPLETED',
    settledAt: record.refundedAt ?? record.settledAt ?? charge.createdAt,
    ...(charge.grantId !== undefined ? { grantId: charge.grantId } : {}),
  };
}

/** The receipt of a credited x402 payment (type `x402_payment`): the buyer's wallet paid the agent. */
export function x402PaymentReceiptFacts(payment: X402PaymentRecord): ReceiptFacts {
  return {
    v: 1,
    type: 'x402_payment',
    id: payment.id,
    amount: amountText(payment.amount, 'USDC'),
    currency: 'USDC',
    payer: { kind: 'solana', id: payment.payer },
    payee: { kind: 'agent', id: payment.agentId },
    status: 'CREDITED',
    settledAt: payment.createdAt,
    transaction: payment.transaction,
    ...(payment.resource !== null ? { resource: payment.resource } : {}),
  };
}

/**
 * The receipt of a COMPLETED refund of an x402 payment (type `refund`, its `xr…` id): the x402
 * payment's receipt reversed, the agent paying the buyer's wallet (the payment's payer, where the
 * refund was sent) back, with the transaction that paid it; undefined before it completed (PENDING,
 * PROCESSING) and for a FAILED one (nothing moved: its amount went back to the agent).
 */
export function x402RefundReceiptFacts(refund: Payout): ReceiptFacts | undefined {
  if (refund.paymentId === undefined || refund.status !== 'COMPLETED') return undefined;
  return {
    v: 1,
    type: 'refund',
    id: refund.id,
    amount: amountText(refund.amount, 'USDC'),
    currency: 'USDC',
    payer: { kind: 'agent', id: refund.agentId },
    payee: { kind: 'solana', id: refund.walletAddress },
    status: refund.status,
    settledAt: refund.processedAt ?? refund.updatedAt,
    ...(refund.txHash !== undefined ? { transaction: refund.txHash } : {}),
  };
}

/** The receipt of a COMPLETED payout (type `payout`): the gross the agent paid out; undefined before. */
export function payoutReceiptFacts(payout: Payout): ReceiptFacts | undefined {
  // A refund of an x402 payment is paid as a payout but is a refund: x402RefundReceiptFacts.
  if (payout.status !== 'COMPLETED' || payout.paymentId !== undefined) return undefined;
  const transaction = payout.txHash ?? payout.externalId;
  return {
    v: 1,
    type: 'payout',
    id: payout.id,
    amount: amountText(payout.amount, payout.currency),
    currency: payout.currency,
    payer: { kind: 'agent', id: payout.agentId },
    payee: { kind: payout.network === 'SOL' ? 'solana' : 'paypal', id: payout.walletAddress },
    status: payout.status,
    settledAt: payout.processedAt ?? payout.updatedAt,
    ...(transaction !== undefined ? { transaction } : {}),
  };
}

/** The receipt of a COMPLETED top-up (type `topup`): the payer funded their own balance; undefined before. */
export function topupReceiptFacts(topup: Topup): ReceiptFacts | undefined {
  if (topup.status !== 'COMPLETED' || topup.amount === undefined) return undefined;
  return {
    v: 1,
    type: 'topup',
    id: topup.id,
    amount: amountText(topup.amount, topup.currency),
    currency: topup.currency,
    payer: { kind: 'user', id: topup.userId },
    payee: { kind: 'balance', id: topup.userId },
    status: topup.status,
    settledAt: topup.completedAt ?? topup.createdAt,
    ...(topup.externalId !== undefined ? { transaction: topup.externalId } : {}),
  };
}
