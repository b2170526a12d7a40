/**
 * Receipts (DESIGN §27, docs/receipts.md): a signed view of a settled record, made on demand from
 * the stored record, never on a movement's own path (a charge's hot path reads and writes nothing
 * more for it). `GET /api/v1/receipts/{id}` answers either party of the movement: the agent's key
 * (x-agent-key) or the payer's account key (x-user-key). A grant key is no payer credential here:
 * it is the agent's delegation, and the agent reads its receipts with its own key. Everyone else,
 * an unknown id and a movement not settled yet get the same 404 `receipt not found`: a receipt
 * does not exist until the movement settles, and no answer tells a stranger that an id exists.
 */

import { isId } from '../../core/ids';
import { chargeIdOfPurchase } from '../../core/purchases';
import {
  chargeIdOfRefundReceipt,
  chargeReceiptFacts,
  payoutReceiptFacts,
  type ReceiptFacts,
  refundReceiptFacts,
  type SettledChargeRecord,
  topupReceiptFacts,
  x402PaymentReceiptFacts,
  x402RefundReceiptFacts,
} from '../../core/receipts';
import { X402_PAYMENT_ID } from '../../core/x402';
import { refuse } from '../../messages/refusal';
import { publishedKeys, receiptSigner, signReceipt } from '../../receipts/signer';
import { getPayout } from '../../store/payouts/payout.repository';
import { getChargeRecord, getX402PaymentRecord } from '../../store/receipts/receipt-records.repository';
import { getTopup } from '../../store/topups/topup.repository';

/** Who asks: an agent by its key, or a payer by the account key. */
export type ReceiptParty = { agentId: string } | { userId: string };

export interface SignedReceipt {
  id: string;
  receipt: string;
}

/** The receipt `id` names, for a party of it; 404 `receipt not found` for anything else. */
export async function readReceipt(party: ReceiptParty, id: string | undefined, now: Date = new Date()): Promise<SignedReceipt> {
  const facts = id === undefined ? undefined : await settledFacts(party, id);
  if (!facts) throw refuse('receiptNotFound');
  return { id: facts.id, receipt: await signReceipt(receiptSigner(), facts, now) };
}

/** The public key set that verifies every receipt, a rotated key's too (`GET /.well-known/jwks.json`). */
export const receiptKeySet = () => publishedKeys(receiptSigner());

const partyTo = (party: ReceiptParty, record: SettledChargeRecord | undefined): record is SettledChargeRecord =>
  record !== undefined && ('agentId' in party ? record.charge.agentId === party.agentId : record.charge.userId === party.userId);

/**
 * What the receipt `id` signs, when `party` was a party to a settled movement of that id. The id's
 * form says which record: a charge's refunds (`<chargeId>.refund`), a purchase (`xp…`), a charge
 * (`c…`, not a purchase's hold: that is known by its `xp…` id), an x402 payment (`x402_…`, the
 * agent's), a refund of one (`xr…`, the agent's: its payee is the buyer's wallet, which holds no
 * credential here), a payout (`p…`, the agent's), a top-up (`t…`, the payer's). Records keyed by
 * their owner are read under the caller's own partition, so another's is never read at all.
 */
export async function settledFacts(party: ReceiptParty, id: string): Promise<ReceiptFacts | undefined> {
  const refunded = chargeIdOfRefundReceipt(id);
  if (refunded !== undefined) {
    if (!isId('charge', refunded)) return undefined;
    const record = await getChargeRecord(refunded);
    return partyTo(party, record) ? refundReceiptFacts(record) : undefined;
  }
  const held = chargeIdOfPurchase(id);
  if (held !== undefined) {
    const record = await getChargeRecord(held);
    return partyTo(party, record) && record.charge.purchase ? chargeReceiptFacts(record, id) : undefined;
  }
  if (isId('charge', id)) {
    const record = await getChargeRecord(id);
    return partyTo(party, record) && !record.charge.purchase ? chargeReceiptFacts(record, id) : undefined;
  }
  if ('agentId' in party) {
    if (X402_PAYMENT_ID.test(id)) {
      const payment = await getX402PaymentRecord(party.agentId, id);
      return payment ? x402PaymentReceiptFacts(payment) : undefined;
    }
    if (isId('payout', id)) {
      const payout = await getPayout(party.agentId, id);
      return payout ? payoutReceiptFacts(payout) : undefined;
    }
    if (isId('x402Refund', id)) {
      // A payout in the agent's X402REFUND# partition (store/table.ts `keys.payout` routes `xr…` ids there).
      const refund = await getPayout(party.agentId, id);
      return refund ? x402RefundReceiptFacts(refund) : undefined;
    }
    return undefined;
  }
  if (isId('topup', id)) {
    const topup = await getTopup(party.userId, id);
    return topup ? topupReceiptFacts(topup) : undefined;
  }
  return undefined;
}
