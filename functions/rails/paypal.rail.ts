/**
 * USD payouts through the PayPal Payouts API (v1): one batch of one item per payout.
 *
 * Exactly once rests on PayPal's own de-duplication: the batch's `sender_batch_id` is the payout
 * id, and PayPal refuses a `sender_batch_id` used in the last 30 days with an error that carries a
 * HATEOAS link to the original batch. So the create can be retried blindly after a 5xx, a timeout
 * or a crash: either PayPal creates the batch (201) or it answers "duplicate" and we follow the link
 * (PayPal puts it in `details[].link[]`, with an empty top-level `links`). A duplicate without a
 * link is thrown as RailAmbiguousAnswerError (no refund, an operator is alarmed), and so is every
 * 4xx that is not a known definitive refusal: only a refusal that says "nothing was created" is
 * answered `failed`. That a create was sent is saved through the checkpoint right before it leaves
 * (after the token is in hand), and the batch id as soon as it is known; later calls skip the create
 * and only read the batch. A payout that may not be paid now (`mayPay`: its agent was disabled) is
 * answered `held` only while no create was ever sent. `PayPal-Request-Id` (the payout id too) is sent as a second line of
 * defence, but nothing relies on it: reports say the Payouts API has not always honoured it.
 *
 * Outcomes come from the item's `transaction_status`: SUCCESS → completed; FAILED, RETURNED,
 * BLOCKED, REFUNDED, REVERSED (and a DENIED or CANCELED batch) → failed; everything else,
 * including UNCLAIMED and ONHOLD which can last for weeks, → pending. An unknown status is pending,
 * never failed: a refund must only follow a status that says the money did not go.
 */
import { isCurrencyOn } from '../core/money';
import { type PaypalReceiverType, paypalReceiverType } from '../core/withdrawals';
import { PAYOUT_FAILURE_REASONS } from '../messages/problems';
import { CheckpointError, PlatformFundsError, RailAmbiguousAnswerError, RailConfigError, RailUnavailableError } from './errors';
import { PaypalClient, type PaypalClientOptions } from './paypal.client';
import {
  createdBatchSchema,
  type PayoutBatch,
  type PaypalCheckpoint,
  type PaypalError,
  payoutBatchSchema,
  paypalCheckpointSchema,
  paypalErrorSchema,
} from './paypal.schemas';
import type { PayoutInstruction, PayoutRail, RailCheckpoint, RailOutcome, RailState } from './rail';

export type { PaypalCredentials } from './paypal.schemas';

export interface PaypalRailOptions extends PaypalClientOptions {
  /** How long one call keeps reading a fresh batch that is still being processed (PENDING). */
  settleTimeoutMs?: number;
  pollIntervalMs?: number;
}

const FINAL_FAILURES = new Set(['FAILED', 'RETURNED', 'BLOCKED', 'REFUNDED', 'REVERSED']);
/** Statuses that change within seconds; UNCLAIMED and ONHOLD can take weeks, so no waiting for them. */
const SETTLING = new Set(['PENDING', 'NEW', 'PROCESSING']);

/**
 * The create refusals after which PayPal holds no batch, so a refund is safe: `VALIDATION_ERROR`
 * (the Payouts API's 400 for an invalid request or receiver) and `INVALID_REQUEST` (the REST API's
 * generic 400 for a malformed request). Any other 4xx (404, 409, 422 other than
 * INSUFFICIENT_FUNDS, a `USER_BUSINESS_ERROR` that is not a recognised duplicate, a name PayPal
 * adds later) does not say that nothing was created: it is thrown, never refunded.
 */
const DEFINITIVE_REJECTIONS = new Set(['VALIDATION_ERROR', 'INVALID_REQUEST']);

type CreateResult = { kind: 'created'; batchId: string } | { kind: 'rejected'; reason: string } | { kind: 'duplicate'; batchId: string };

export class PaypalRail implements PayoutRail {
  private readonly client: PaypalClient;
  private readonly settleTimeoutMs: number;
  private readonly pollIntervalMs: number;

  constructor(options: PaypalRailOptions = {}) {
    this.client = new PaypalClient(options);
    this.settleTimeoutMs = options.settleTimeoutMs ?? 10_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
  }

  async pay(instruction: PayoutInstruction, checkpoint: RailCheckpoint): Promise<RailOutcome> {
    if (!isCurrencyOn(instruction.currency, 'paypal'))
      return { kind: 'failed', reason: PAYOUT_FAILURE_REASONS.wrongCurrency('paypal', 'USD', instruction.currency) };
    if (!Number.isSafeInteger(instruction.netAmount) || instruction.netAmount <= 0) {
      return { kind: 'failed', reason: PAYOUT_FAILURE_REASONS.netAmountNotWhole('cents') };
    }
    // The withdraw request was checked with this same rule; this catches a payout written before a
    // rule change, which PayPal would refuse anyway, without sending it.
    const recipientType = paypalReceiverType(instruction.destination);
    if (!recipientType) return { kind: 'failed', reason: PAYOUT_FAILURE_REASONS.invalidPaypalAccount };

    const state = readCheckpoint(checkpoint.saved);
    let batchId = state?.batchId;
    if (!batchId) {
      // Nothing sent to PayPal yet: the payout may not be paid now (its agent was disabled since the
      // withdrawal; docs/payouts.md, "Held payouts"), and then nothing is started. Once a create was
      // sent, its answer lost, PayPal may hold a batch: only sending it again (de-duplicated by the
      // payout id) tells, so it is sent again whatever `mayPay` says.
      if (state?.createSentAt === undefined && instruction.mayPay && !(await instruction.mayPay())) return { kind: 'held' };
      const sent =
        state?.createSentAt === undefined ? () => checkpoint.save({ rail: 'paypal', createSentAt: new Date().toISOString() }) : undefined;
      const created = await this.create(instruction, recipientType, sent);
      if (created.kind === 'rejected') return { kind: 'failed', reason: created.reason };
      batchId = created.batchId;
      await checkpoint.save({ rail: 'paypal', batchId });
    }
    return this.awaitOutcome(instruction.payoutId, batchId);
  }

  private async create(
    instruction: PayoutInstruction,
    recipientType: PaypalReceiverType,
    beforeSend?: () => Promise<void>,
  ): Promise<CreateResult> {
    const body = {
      sender_batch_header: {
        sender_batch_id: instruction.payoutId,
        email_subject: 'You have a payout',
        email_message: 'You received a withdrawal from the Agent Payment Service.',
      },
      items: [
        {
          recipient_type: recipientType,
          amount: { value: centsToDecimal(instruction.netAmount), currency: 'USD' },
          receiver: instruction.destination,
          sender_item_id: instruction.payoutId,
          note: `Withdrawal ${instruction.payoutId}`,
        },
      ],
    };
    const res = await this.client.call('POST', '/v1/payments/payouts', body, { 'paypal-request-id': instruction.payoutId }, beforeSend);
    if (res.status === 200 || res.status === 201) {
      const parsed = createdBatchSchema.safeParse(res.body);
      if (!parsed.success) throw new RailUnavailableError('paypal create payout answered without a batch id');
      return { kind: 'created', batchId: parsed.data.batch_header.payout_batch_id };
    }
    const error = paypalErrorSchema.safeParse(res.body).data ?? {};
    if (isDuplicate(error)) {
      const batchId = batchIdFromLinks(error);
      if (batchId) return { kind: 'duplicate', batchId };
      // PayPal holds a batch for this payout but does not say which. Money may have moved, so no
      // refund, and every retry gets the same answer: an operator must find the batch.
      throw new RailAmbiguousAnswerError(
        `paypal answered ${res.status} ${error.name ?? ''} duplicate sender_batch_id ${instruction.payoutId} without a link to the batch; find the batch in the PayPal account`,
      );
    }
    if (error.name === 'INSUFFICIENT_FUNDS') throw new PlatformFundsError('paypal account balance is too low for this payout');
    if (res.status === 401 || res.status === 403) {
      throw new RailConfigError(`paypal refused the platform's credentials for payouts (${res.status} ${error.name ?? ''})`.trim());
    }
    if (res.status === 400 && error.name && DEFINITIVE_REJECTIONS.has(error.name)) {
      return {
        kind: 'rejected',
        reason: PAYOUT_FAILURE_REASONS.paypalRejected(error.name, error.message),
      };
    }
    throw new RailAmbiguousAnswerError(
      `paypal create payout answered ${res.status} ${error.name ?? '(no error name)'}, not a known refusal: not refunded, retried`,
    );
  }

  private async awaitOutcome(payoutId: string, batchId: string): Promise<RailOutcome> {
    const deadline = Date.now() + this.settleTimeoutMs;
    for (;;) {
      const batch = await this.readBatch(batchId);
      const senderBatchId = batch.batch_header.sender_batch_header?.sender_batch_id;
      if (senderBatchId !== undefined && senderBatchId !== payoutId) {
        throw new CheckpointError('saved paypal batch belongs to another payout');
      }
      const outcome = outcomeOf(batch, payoutId, batchId);
      if (outcome.kind !== 'pending' || !outcome.settling || Date.now() + this.pollIntervalMs > deadline) return outcome.result;
      await new Promise((resolve) => setTimeout(resolve, this.pollIntervalMs));
    }
  }

  private async readBatch(batchId: string): Promise<PayoutBatch> {
    const res = await this.client.call('GET', `/v1/payments/payouts/${encodeURIComponent(batchId)}`);
    if (res.status !== 200) {
      // 404 for a batch id PayPal itself gave us is not a reason to refund.
      throw new RailUnavailableError(`paypal get payout batch answered ${res.status}`);
    }
    const parsed = payoutBatchSchema.safeParse(res.body);
    if (!parsed.success) throw new RailUnavailableError('paypal get payout batch answered an unexpected body');
    return parsed.data;
  }
}

/** Cents → PayPal's amount text, always two decimals (`970` → `"9.70"`). */
export function centsToDecimal(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

function outcomeOf(
  batch: PayoutBatch,
  payoutId: string,
  batchId: string,
): { kind: RailOutcome['kind']; settling: boolean; result: RailOutcome } {
  const batchStatus = batch.batch_header.batch_status;
  if (batchStatus === 'DENIED' || batchStatus === 'CANCELED') {
    return {
      kind: 'failed',
      settling: false,
      result: { kind: 'failed', reason: PAYOUT_FAILURE_REASONS.paypalBatch(batchStatus), externalId: batchId },
    };
  }
  const items = batch.items ?? [];
  const item = items.find((i) => i.payout_item?.sender_item_id === payoutId) ?? items[0];
  const status = item?.transaction_status;
  if (status === 'SUCCESS') return { kind: 'completed', settling: false, result: { kind: 'completed', externalId: batchId } };
  if (status && FINAL_FAILURES.has(status)) {
    const reason = PAYOUT_FAILURE_REASONS.paypalItem(status, item?.errors?.name);
    return { kind: 'failed', settling: false, result: { kind: 'failed', reason, externalId: batchId } };
  }
  return { kind: 'pending', settling: !status || SETTLING.has(status), result: { kind: 'pending', externalId: batchId } };
}

function isDuplicate(error: PaypalError): boolean {
  if (error.name?.includes('DUPLICATE')) return true;
  return (error.details ?? []).some(
    (d) => /sender_batch_id/i.test(d.field ?? '') || /duplicate|already exists|sender_batch_id/i.test(d.issue ?? ''),
  );
}

/** The original batch's id, from the link PayPal puts in the detail or (per its schema) at the top. */
function batchIdFromLinks(error: PaypalError): string | undefined {
  const links = [...(error.details ?? []).flatMap((d) => d.link ?? []), ...(error.links ?? [])];
  for (const link of links) {
    const match = /\/v1\/payments\/payouts\/([^/?#]+)/.exec(link.href);
    if (match?.[1]) return decodeURIComponent(match[1]);
  }
  return undefined;
}

function readCheckpoint(saved: RailState | undefined): PaypalCheckpoint | undefined {
  if (saved === undefined) return undefined;
  const parsed = paypalCheckpointSchema.safeParse(saved);
  if (!parsed.success) throw new CheckpointError('saved rail state is not a PayPal checkpoint');
  return parsed.data;
}
