/**
 * The receipt an event of a settled movement carries (DESIGN §27, docs/webhooks.md): signed on the
 * webhook dispatcher's path, after the movement committed, never in its transaction (a charge's hot
 * path does nothing more for it). The event's owner is the party the receipt is read for, as if it
 * asked `GET /api/v1/receipts/{id}` itself, so an event carries exactly the receipt its owner could
 * read: the same facts, signed when the event is dispatched.
 */
import { refundReceiptId } from '../../core/receipts';
import { receiptSigner, signReceipt } from '../../receipts/signer';
import { type ReceiptParty, settledFacts } from './receipts';

/** The events that report a settled movement, and the receipt id each names by its data's id. */
const RECEIPT_OF_EVENT: Readonly<Record<string, (id: string) => string>> = {
  'charge.succeeded': (id) => id,
  'charge.refunded': refundReceiptId,
  'x402.purchase.succeeded': (id) => id,
  'x402.payment.settled': (id) => id,
  // Sent with the refund's COMPLETED: its data's id is the `xr…` id, the refund's own receipt.
  'x402.payment.refunded': refundReceiptId,
  'payout.completed': (id) => id,
  'topup.completed': (id) => id,
};

/** Whether events of `type` carry a receipt. */
export const carriesReceipt = (type: string): boolean => type in RECEIPT_OF_EVENT;

/** The owner key of an event (`agent#<id>`, `user#<id>`) as the party a receipt is read for. */
function partyOf(owner: string): ReceiptParty | undefined {
  const [kind, id] = owner.split('#');
  if (!id) return undefined;
  return kind === 'agent' ? { agentId: id } : kind === 'user' ? { userId: id } : undefined;
}

/**
 * The receipt of the movement the event reports, for its owner; undefined when it reports none (its
 * type, or a record that is not settled as its owner reads it: nothing to sign). `body` is the
 * event's exact JSON, `{id, type, createdAt, data}`.
 */
export async function eventReceipt(
  event: { type: string; owner: string; body: string },
  now: Date = new Date(),
): Promise<string | undefined> {
  const receiptId = RECEIPT_OF_EVENT[event.type];
  const party = partyOf(event.owner);
  if (!receiptId || !party) return undefined;
  const dataId = (JSON.parse(event.body) as { data?: { id?: unknown } }).data?.id;
  if (typeof dataId !== 'string') return undefined;
  const facts = await settledFacts(party, receiptId(dataId));
  return facts ? signReceipt(receiptSigner(), facts, now) : undefined;
}

/**
 * The event's body with its receipt: `{id, type, createdAt, data, receipt}`. The body's bytes before
 * are kept exactly (the receipt is appended as the envelope's last member), so what was stored in the
 * outbox and what is signed for delivery differ by that member only.
 */
export function withReceipt(body: string, receipt: string | undefined): string {
  if (receipt === undefined || !body.endsWith('}')) return body;
  return `${body.slice(0, -1)},"receipt":${JSON.stringify(receipt)}}`;
}
