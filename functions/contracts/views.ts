/** Public JSON shapes of the resources (money as exact JSON numbers). */

import type { Agent } from '../core/agents';
import type { Charge } from '../core/charges';
import { PLATFORM_FEE_RATE } from '../core/fees';
import { formatAmount, isOnRail } from '../core/money';
import type { Payout } from '../core/payouts';
import { purchaseIdOf, type SignedPurchase } from '../core/purchases';
import { solanaPayUrl, type Topup } from '../core/topups';
import type { Balances } from '../core/users';
import { jsonAmount } from './json';
import { receiptUrlOf } from './responses/receipts';

/**
 * Where the receipt links of an answer point: the API's public address (PUBLIC_BASE_URL, a route
 * that shows a movement makes links), or undefined for a body that carries none (an event: it
 * carries its signed `receipt` itself, docs/webhooks.md). Required of every caller, so no answer
 * leaves its links out by forgetting them.
 */
export type ReceiptLinks = string | undefined;

/**
 * A charge's receipt links (DESIGN §27), exactly when `GET /api/v1/receipts/{id}` has the receipt
 * (core/receipts.ts): `receiptUrl` once it is SUCCESS (a purchase's under its `xp…` id), and
 * `refundReceiptUrl` once refunds gave some of a charge back (never a purchase's: a seller was paid).
 * Absent otherwise. Built from the record alone: no request to anything.
 */
function chargeReceiptLinks(charge: Charge, baseUrl: ReceiptLinks) {
  if (baseUrl === undefined) return {};
  const settled = charge.status === 'SUCCESS';
  const refunded = !charge.purchase && (charge.refundedAmount ?? 0) > 0;
  return {
    ...(settled ? { receiptUrl: receiptUrlOf(charge.purchase ? 'x402_purchase' : 'charge', publicChargeId(charge), baseUrl) } : {}),
    ...(refunded ? { refundReceiptUrl: receiptUrlOf('refund', charge.id, baseUrl) } : {}),
  };
}

/** The id clients see: an x402 purchase's own (`xp…`, DESIGN §22), never the id of the hold behind it. */
const publicChargeId = (charge: Charge): string => (charge.purchase ? purchaseIdOf(charge.id) : charge.id);

export function chargeView(charge: Charge, baseUrl: ReceiptLinks) {
  return {
    id: publicChargeId(charge),
    idempotencyKey: charge.idempotencyKey,
    amount: jsonAmount(charge.amount, charge.currency),
    currency: charge.currency,
    description: charge.description,
    status: charge.status,
    createdAt: charge.createdAt,
    failureReason: charge.failureReason ?? null,
    pendingReason: charge.pendingReason ?? null,
    expiresAt: charge.expiresAt ?? null,
    authorizedAmount: charge.authorizedAmount === undefined ? null : jsonAmount(charge.authorizedAmount, charge.currency),
    refundedAmount: jsonAmount(charge.refundedAmount ?? 0, charge.currency),
    // Only on a charge made with a grant key (DESIGN §16): account-key charges answer as in v1.
    ...(charge.grantId !== undefined ? { grantId: charge.grantId } : {}),
    ...chargeReceiptLinks(charge, baseUrl),
  };
}

/**
 * A charge in its payer's history: the Charge fields and the agent that made it; an x402 purchase
 * (DESIGN §22) as one with its own id, `type: "x402_purchase"`, who was paid and for what.
 */
export function userChargeView(charge: Charge, baseUrl: ReceiptLinks) {
  const view = { ...chargeView(charge, baseUrl), agent: { id: charge.agentId, name: charge.agentName ?? null } };
  // A tab's hold and its capture (DESIGN §29): the tab it was for (the agent reads it as the tab's chargeId).
  if (charge.tabId !== undefined) return { ...view, type: 'tab' as const, tabId: charge.tabId };
  if (!charge.purchase) return view;
  return {
    ...view,
    type: 'x402_purchase' as const,
    payTo: charge.purchase.requirements.payTo,
    resource: charge.purchase.resource,
  };
}

/**
 * An x402 purchase as its agent sees it (DESIGN §22): the hold's state in the charge's status
 * values, the seller's terms, and the payment the service signed (null until it has one: waiting
 * for the payer's approval, or ended without one).
 */
export function purchaseView(charge: Charge, baseUrl: ReceiptLinks) {
  const p = charge.purchase;
  if (!p) throw new Error(`charge ${charge.id} is not a purchase`);
  return {
    id: purchaseIdOf(charge.id),
    status: charge.status,
    pendingReason: charge.status === 'PENDING' && charge.pendingReason === 'user_approval' ? 'user_approval' : null,
    failureReason: charge.failureReason ?? null,
    amount: jsonAmount(charge.authorizedAmount ?? charge.amount, charge.currency),
    currency: charge.currency,
    payTo: p.requirements.payTo,
    network: p.requirements.network,
    resource: p.resource,
    grantId: charge.grantId ?? null,
    createdAt: charge.createdAt,
    expiresAt: charge.expiresAt ?? null,
    paymentPayload: charge.status === 'PENDING' || charge.status === 'SUCCESS' ? paymentPayloadView(p.signed) : null,
    transaction: p.transaction ?? null,
    // Captured on chain: its receipt (type x402_purchase), as any settled charge's.
    ...(baseUrl !== undefined && charge.status === 'SUCCESS'
      ? { receiptUrl: receiptUrlOf('x402_purchase', purchaseIdOf(charge.id), baseUrl) }
      : {}),
  };
}

/**
 * The payment as `createPaymentPayload` returns it, in its order whatever order the stored map
 * comes back in: every answer and replay of a purchase says it in the same bytes.
 */
export function paymentPayloadView(signed: SignedPurchase | undefined) {
  return signed ? { x402Version: signed.paymentPayload.x402Version, payload: signed.paymentPayload.payload } : null;
}

export function balancesView(balances: Balances) {
  return { USD: jsonAmount(balances.USD, 'USD'), USDC: jsonAmount(balances.USDC, 'USDC') };
}

export function agentView(agent: Omit<Agent, 'keyHash'>) {
  return {
    id: agent.id,
    name: agent.name,
    email: agent.email,
    website: agent.website,
    enabled: agent.enabled,
    createdAt: agent.createdAt,
  };
}

/**
 * The answer to an accepted withdrawal (spec: Withdraw funds, success). `accountCreationFee` is in
 * the breakdown when the request asked `createTokenAccount` (0 when the account already existed), so
 * the spec's breakdown, where net = gross − platformFee, is unchanged for every other withdrawal.
 */
export function withdrawalView(payout: Payout, options: { accountCreationFee: boolean }) {
  return {
    success: true,
    payoutId: payout.id,
    breakdown: {
      grossAmount: jsonAmount(payout.amount, payout.currency),
      platformFeeRate: PLATFORM_FEE_RATE,
      platformFee: jsonAmount(payout.fee, payout.currency),
      ...(options.accountCreationFee ? { accountCreationFee: jsonAmount(payout.accountCreationFee, payout.currency) } : {}),
      netAmount: jsonAmount(payout.netAmount, payout.currency),
      currency: payout.currency,
      walletAddress: payout.walletAddress,
      network: payout.network,
    },
  };
}

/**
 * The Payout object. `amount` is the gross amount debited, `fee` the platform fee,
 * `accountCreationFee` what creating the destination's token account cost (0 when none),
 * `netAmount` what the rail pays. Unknown values are null, never absent.
 */
export function payoutView(payout: Payout, baseUrl: ReceiptLinks) {
  return {
    id: payout.id,
    agentId: payout.agentId,
    currency: payout.currency,
    status: payout.status,
    destination: { network: payout.network, walletAddress: payout.walletAddress },
    externalId: payout.externalId ?? null,
    txHash: payout.txHash ?? null,
    createdAt: payout.createdAt,
    processedAt: payout.processedAt ?? null,
    amount: jsonAmount(payout.amount, payout.currency),
    fee: jsonAmount(payout.fee, payout.currency),
    netAmount: jsonAmount(payout.netAmount, payout.currency),
    platformFeeRate: PLATFORM_FEE_RATE,
    accountCreationFee: jsonAmount(payout.accountCreationFee, payout.currency),
    failureReason: payout.failureReason ?? null,
    // COMPLETED: paid out, so its receipt exists (type payout); absent while it may still fail.
    ...(baseUrl !== undefined && payout.status === 'COMPLETED' ? { receiptUrl: receiptUrlOf('payout', payout.id, baseUrl) } : {}),
  };
}

/** The label a wallet shows for the Solana Pay request. */
export const SOLANA_PAY_LABEL = 'Agent Payment Service';

/** The public shape of a top-up (DESIGN §13): `amount` and `externalId` are null until known. */
export function topupView(t: Topup) {
  const common = {
    id: t.id,
    currency: t.currency,
    amount: t.amount === undefined ? null : jsonAmount(t.amount, t.currency),
    status: t.status,
    externalId: t.externalId ?? null,
    createdAt: t.createdAt,
    expiresAt: t.expiresAt,
    completedAt: t.completedAt ?? null,
    failureReason: t.failureReason ?? null,
  };
  if (isOnRail(t, 'solana')) {
    return {
      ...common,
      network: 'SOL' as const,
      address: t.address,
      reference: t.reference,
      solanaPayUrl: solanaPayUrl(
        { ...t, amount: t.requestedAmount === undefined ? undefined : formatAmount(t.requestedAmount, 'USDC') },
        SOLANA_PAY_LABEL,
      ),
    };
  }
  return { ...common, approveUrl: t.approveUrl };
}
