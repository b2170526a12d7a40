/**
 * The PayPal imitation's Payouts API: create a batch (with `sender_batch_id` de-duplication and
 * the outcomes chosen by the receiver's name, see paypal-sandbox.ts), show a batch, show an item.
 * `url` is the sandbox's own base URL, for the HATEOAS links the rail follows.
 */
import { debugId, notFound, paypalId, reply, type SandboxReply, validationError } from './paypal-sandbox.replies';
import type { ItemStatus, SandboxBatch, SandboxItem, SandboxState } from './paypal-sandbox.state';

/** The item status a receiver's e-mail local part asks for; any other name succeeds. */
const STATUS_BY_NAME: Record<string, ItemStatus> = {
  fail: 'FAILED',
  failed: 'FAILED',
  returned: 'RETURNED',
  blocked: 'BLOCKED',
  refunded: 'REFUNDED',
  reversed: 'REVERSED',
  unclaimed: 'UNCLAIMED',
  onhold: 'ONHOLD',
  pending: 'PENDING',
};

interface CreateRequest {
  sender_batch_header?: { sender_batch_id?: unknown; recipient_type?: unknown; email_subject?: unknown; email_message?: unknown };
  items?: unknown;
}

/** `POST /v1/payments/payouts`. */
export function createPayout(state: SandboxState, text: string, url: string): SandboxReply {
  let request: CreateRequest;
  try {
    request = JSON.parse(text) as CreateRequest;
  } catch {
    return validationError([{ field: 'body', issue: 'MALFORMED_REQUEST_JSON' }]);
  }
  const header = request.sender_batch_header ?? {};
  const senderBatchId = typeof header.sender_batch_id === 'string' ? header.sender_batch_id : undefined;
  const rawItems = Array.isArray(request.items) ? (request.items as Record<string, unknown>[]) : [];
  if (!senderBatchId) return validationError([{ field: 'sender_batch_header.sender_batch_id', issue: 'Required field is missing' }]);
  if (rawItems.length === 0) return validationError([{ field: 'items', issue: 'Required field is missing' }]);

  const existing = state.batchBySenderId(senderBatchId);
  if (existing) return duplicate(senderBatchId, existing, url);

  const items: SandboxItem[] = [];
  const problems: { field: string; issue: string }[] = [];
  rawItems.forEach((raw, i) => {
    const { item, problems: itemProblems } = readItem(raw, i, header.recipient_type);
    items.push(item);
    problems.push(...itemProblems);
  });
  if (problems.length > 0) return validationError(problems);

  const names = new Set(items.map((i) => receiverName(i.receiver)));
  if (names.has('timeout')) return undefined; // never answers, creates nothing
  if (names.has('http500')) {
    return reply(500, { name: 'INTERNAL_SERVER_ERROR', message: 'An internal server error has occurred.', debug_id: debugId() });
  }
  if (names.has('insufficient')) {
    return reply(422, {
      name: 'INSUFFICIENT_FUNDS',
      message: 'Sender does not have sufficient funds. Please add funds and retry.',
      debug_id: debugId(),
    });
  }

  const batch: SandboxBatch = {
    payoutBatchId: paypalId(),
    senderBatchId,
    emailSubject: typeof header.email_subject === 'string' ? header.email_subject : undefined,
    emailMessage: typeof header.email_message === 'string' ? header.email_message : undefined,
    createdAt: new Date().toISOString(),
    items,
  };
  state.addBatch(batch);
  if (names.has('lost') || names.has('nolink')) return undefined; // created, but the answer never arrives
  return reply(201, {
    batch_header: {
      payout_batch_id: batch.payoutBatchId,
      batch_status: 'PENDING',
      sender_batch_header: { sender_batch_id: senderBatchId, email_subject: batch.emailSubject, email_message: batch.emailMessage },
    },
    links: [batchLink(url, batch.payoutBatchId)],
  });
}

/** `GET /v1/payments/payouts/{payout_batch_id}`. */
export function showBatch(state: SandboxState, payoutBatchId: string, url: string): SandboxReply {
  const batch = state.batch(payoutBatchId);
  return batch ? reply(200, batchView(batch, url)) : notFound();
}

/** `GET /v1/payments/payouts-item/{payout_item_id}`. */
export function showItem(state: SandboxState, payoutItemId: string, url: string): SandboxReply {
  const found = state.item(payoutItemId);
  if (!found) return notFound();
  return reply(200, { ...itemView(found.batch, found.item, url), sender_batch_id: found.batch.senderBatchId });
}

/**
 * PayPal's answer to a reused `sender_batch_id`, as PayPal sends it: a 400 USER_BUSINESS_ERROR
 * whose detail carries the link to the original batch (`details[0].link`), and an empty top-level
 * `links`. A batch created for a `nolink@` receiver is answered in the older shape reported in
 * 2015 (issue "Duplicate batch request", no link at all), which only an operator can resolve.
 */
function duplicate(senderBatchId: string, existing: SandboxBatch, url: string): SandboxReply {
  const linked = !existing.items.some((i) => receiverName(i.receiver) === 'nolink');
  const detail = linked
    ? {
        field: 'SENDER_BATCH_ID',
        location: 'body',
        issue: 'Batch with given sender_batch_id already exists',
        link: [batchLink(url, existing.payoutBatchId)],
      }
    : { field: 'SENDER_BATCH_ID', location: 'body', issue: 'Duplicate batch request' };
  return reply(400, {
    name: 'USER_BUSINESS_ERROR',
    message: 'User business error.',
    debug_id: debugId(),
    information_link: 'https://developer.paypal.com/docs/api/payments.payouts-batch/#errors',
    details: [{ ...detail, value: senderBatchId }],
    links: [],
  });
}

/** One request item as the sandbox keeps it, and what is wrong with it. */
function readItem(
  raw: Record<string, unknown>,
  i: number,
  headerRecipientType: unknown,
): { item: SandboxItem; problems: { field: string; issue: string }[] } {
  const problems: { field: string; issue: string }[] = [];
  const amount = raw.amount as { value?: unknown; currency?: unknown } | undefined;
  const recipientType = typeof raw.recipient_type === 'string' ? raw.recipient_type : headerRecipientType;
  const receiver = typeof raw.receiver === 'string' ? raw.receiver : '';
  if (typeof amount?.value !== 'string' || !/^\d{1,10}\.\d{2}$/.test(amount.value) || Number(amount.value) <= 0) {
    problems.push({ field: `items[${i}].amount.value`, issue: 'Currency amount must be a positive number with two decimals' });
  }
  if (typeof amount?.currency !== 'string' || !/^[A-Z]{3}$/.test(amount.currency)) {
    problems.push({ field: `items[${i}].amount.currency`, issue: 'Currency code is invalid' });
  }
  if (recipientType !== 'EMAIL' && recipientType !== 'PAYPAL_ID' && recipientType !== 'PHONE') {
    problems.push({ field: `items[${i}].recipient_type`, issue: 'Recipient type is invalid' });
  }
  const name = receiverName(receiver);
  if (!receiver || name === 'rejected')
    problems.push({ field: `items[${i}].receiver`, issue: 'Receiver is invalid or does not match with type' });
  const item: SandboxItem = {
    payoutItemId: paypalId(),
    transactionId: paypalId(17),
    // A PAYPAL_ID receiver has no name to read an outcome from: it always succeeds.
    status: recipientType === 'EMAIL' ? (STATUS_BY_NAME[name] ?? 'SUCCESS') : 'SUCCESS',
    recipientType: String(recipientType),
    receiver,
    amount: { value: String(amount?.value), currency: String(amount?.currency) },
    senderItemId: typeof raw.sender_item_id === 'string' ? raw.sender_item_id : undefined,
    note: typeof raw.note === 'string' ? raw.note : undefined,
  };
  return { item, problems };
}

/** The e-mail local part before any `+`, lower-cased: what picks the item's fate. */
function receiverName(receiver: string): string {
  return receiver.split('@')[0]?.split('+')[0]?.toLowerCase() ?? '';
}

function batchView(batch: SandboxBatch, url: string) {
  const total = batch.items.reduce((sum, i) => sum + Math.round(Number(i.amount.value) * 100), 0);
  const settled = batch.items.every((i) => i.status !== 'PENDING');
  return {
    batch_header: {
      payout_batch_id: batch.payoutBatchId,
      batch_status: settled ? 'SUCCESS' : 'PROCESSING',
      time_created: batch.createdAt,
      ...(settled ? { time_completed: batch.createdAt } : {}),
      sender_batch_header: { sender_batch_id: batch.senderBatchId, email_subject: batch.emailSubject, email_message: batch.emailMessage },
      amount: { currency: batch.items[0]?.amount.currency ?? 'USD', value: (total / 100).toFixed(2) },
      fees: { currency: batch.items[0]?.amount.currency ?? 'USD', value: '0.00' },
    },
    items: batch.items.map((item) => itemView(batch, item, url)),
    links: [batchLink(url, batch.payoutBatchId)],
  };
}

function itemView(batch: SandboxBatch, item: SandboxItem, url: string) {
  return {
    payout_item_id: item.payoutItemId,
    ...(item.status === 'SUCCESS' ? { transaction_id: item.transactionId } : {}),
    transaction_status: item.status,
    payout_item_fee: { currency: item.amount.currency, value: '0.00' },
    payout_batch_id: batch.payoutBatchId,
    payout_item: {
      recipient_type: item.recipientType,
      amount: item.amount,
      note: item.note,
      receiver: item.receiver,
      sender_item_id: item.senderItemId,
      recipient_wallet: 'PAYPAL',
    },
    time_processed: batch.createdAt,
    ...(item.status === 'FAILED' ? { errors: { name: 'RECEIVER_UNREGISTERED', message: 'Receiver is unregistered' } } : {}),
    links: [{ href: `${url}/v1/payments/payouts-item/${item.payoutItemId}`, rel: 'item', method: 'GET', encType: 'application/json' }],
  };
}

function batchLink(url: string, payoutBatchId: string) {
  return { href: `${url}/v1/payments/payouts/${payoutBatchId}`, rel: 'self', method: 'GET', encType: 'application/json' };
}
