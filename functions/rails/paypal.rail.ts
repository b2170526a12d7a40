/**
 * USD payouts through the PayPal Payouts API (v1): one batch of one item per payout.
 *
 * Exactly once rests on PayPal's own de-duplication: the batch's `sender_batch_id` is the payout
 * id, and PayPal refuses a `sender_batch_id` used in the last 30 days with an error that carries a
 * HATEOAS link to the original batch. So the create can be retried blindly after a 5xx, a timeout
 * or a crash: either PayPal creates the batch (201) or it answers "duplicate" and we follow the link.
 * The batch id is saved through the checkpoint as soon as it is known; later calls skip the create
 * and only read the batch. `PayPal-Request-Id` (the payout id too) is sent as a second line of
 * defence, but nothing relies on it: reports say the Payouts API has not always honoured it.
 *
 * Outcomes come from the item's `transaction_status`: SUCCESS → completed; FAILED, RETURNED,
 * BLOCKED, REFUNDED, REVERSED (and a DENIED or CANCELED batch) → failed; everything else,
 * including UNCLAIMED and ONHOLD which can last for weeks, → pending. An unknown status is pending,
 * never failed: a refund must only follow a status that says the money did not go.
 */
import * as z from 'zod';
import { config } from '../config';
import { logger } from '../observability/logger';
import { readSecretString } from '../store/secrets';
import { CheckpointError, PlatformFundsError, RailConfigError, RailUnavailableError } from './errors';
import type { PayoutInstruction, PayoutRail, RailCheckpoint, RailOutcome, RailState } from './rail';

export interface PaypalRailOptions {
  /** Defaults: PAYPAL_BASE_URL and PAYPAL_CLIENT_ID/SECRET (or PAYPAL_CREDENTIALS_SECRET_ARN). */
  baseUrl?: string;
  credentials?: () => Promise<PaypalCredentials>;
  /** Per HTTP request; a hung API is a transient error. */
  requestTimeoutMs?: number;
  /** How long one call keeps reading a fresh batch that is still being processed (PENDING). */
  settleTimeoutMs?: number;
  pollIntervalMs?: number;
  /** Clock for the token cache (tests). */
  now?: () => number;
}

export interface PaypalCredentials {
  clientId: string;
  clientSecret: string;
}

const FINAL_FAILURES = new Set(['FAILED', 'RETURNED', 'BLOCKED', 'REFUNDED', 'REVERSED']);
/** Statuses that change within seconds; UNCLAIMED and ONHOLD can take weeks, so no waiting for them. */
const SETTLING = new Set(['PENDING', 'NEW', 'PROCESSING']);
/** A token is refreshed this long before PayPal says it expires. */
const TOKEN_MARGIN_MS = 60_000;
const PAYER_ID = /^[A-Z0-9]{13}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const savedSchema = z.object({ rail: z.literal('paypal'), batchId: z.string().min(1).max(64) });

const tokenSchema = z.object({ access_token: z.string().min(1), expires_in: z.number().nonnegative() });

const errorSchema = z
  .object({
    name: z.string().optional(),
    message: z.string().optional(),
    details: z.array(z.object({ field: z.string().optional(), issue: z.string().optional() }).loose()).optional(),
    links: z.array(z.object({ href: z.string(), rel: z.string().optional() }).loose()).optional(),
  })
  .loose();
type PaypalError = z.infer<typeof errorSchema>;

const createdSchema = z.object({ batch_header: z.object({ payout_batch_id: z.string().min(1) }).loose() }).loose();

const batchSchema = z
  .object({
    batch_header: z
      .object({
        payout_batch_id: z.string(),
        batch_status: z.string(),
        sender_batch_header: z.object({ sender_batch_id: z.string().optional() }).loose().optional(),
      })
      .loose(),
    items: z
      .array(
        z
          .object({
            payout_item_id: z.string().optional(),
            transaction_status: z.string().optional(),
            payout_item: z.object({ sender_item_id: z.string().optional() }).loose().optional(),
            errors: z.object({ name: z.string().optional(), message: z.string().optional() }).loose().optional(),
          })
          .loose(),
      )
      .optional(),
  })
  .loose();
type Batch = z.infer<typeof batchSchema>;

type CreateResult = { kind: 'created'; batchId: string } | { kind: 'rejected'; reason: string } | { kind: 'duplicate'; batchId?: string };

export class PaypalRail implements PayoutRail {
  private token: { value: string; expiresAt: number } | undefined;
  private tokenRequest: Promise<string> | undefined;
  private credentials: Promise<PaypalCredentials> | undefined;
  private readonly requestTimeoutMs: number;
  private readonly settleTimeoutMs: number;
  private readonly pollIntervalMs: number;
  private readonly now: () => number;

  constructor(private readonly options: PaypalRailOptions = {}) {
    this.requestTimeoutMs = options.requestTimeoutMs ?? 15_000;
    this.settleTimeoutMs = options.settleTimeoutMs ?? 10_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  async pay(instruction: PayoutInstruction, checkpoint: RailCheckpoint): Promise<RailOutcome> {
    if (instruction.currency !== 'USD') return { kind: 'failed', reason: `paypal rail pays USD, not ${instruction.currency}` };
    if (!Number.isSafeInteger(instruction.netAmount) || instruction.netAmount <= 0) {
      return { kind: 'failed', reason: 'net amount must be a positive whole number of cents' };
    }
    const recipientType = recipientTypeOf(instruction.destination);
    if (!recipientType) return { kind: 'failed', reason: 'invalid paypal account' };

    let batchId = readCheckpoint(checkpoint.saved)?.batchId;
    if (!batchId) {
      const created = await this.create(instruction, recipientType);
      if (created.kind === 'rejected') return { kind: 'failed', reason: created.reason };
      if (!created.batchId) {
        // PayPal has a batch for this payout but did not say which. Money may have moved, so no
        // refund: stay pending, and the reconciler's next call asks again. Needs an operator if it lasts.
        logger().warn('paypal reported a duplicate sender_batch_id without a link to the batch', { payoutId: instruction.payoutId });
        return { kind: 'pending' };
      }
      batchId = created.batchId;
      await checkpoint.save({ rail: 'paypal', batchId });
    }
    return this.awaitOutcome(instruction.payoutId, batchId);
  }

  private async create(instruction: PayoutInstruction, recipientType: 'EMAIL' | 'PAYPAL_ID'): Promise<CreateResult> {
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
    const res = await this.call('POST', '/v1/payments/payouts', body, { 'paypal-request-id': instruction.payoutId });
    if (res.status === 200 || res.status === 201) {
      const parsed = createdSchema.safeParse(res.body);
      if (!parsed.success) throw new RailUnavailableError('paypal create payout answered without a batch id');
      return { kind: 'created', batchId: parsed.data.batch_header.payout_batch_id };
    }
    const error = errorSchema.safeParse(res.body).data ?? {};
    if (isDuplicate(error)) {
      const batchId = batchIdFromLinks(error);
      return batchId ? { kind: 'duplicate', batchId } : { kind: 'duplicate' };
    }
    if (error.name === 'INSUFFICIENT_FUNDS') throw new PlatformFundsError('paypal account balance is too low for this payout');
    if (res.status === 401 || res.status === 403) {
      throw new RailConfigError(`paypal refused the platform's credentials for payouts (${res.status} ${error.name ?? ''})`.trim());
    }
    // Any other 4xx: PayPal refused the request and created nothing, so a refund is safe.
    return {
      kind: 'rejected',
      reason: `paypal rejected the payout: ${error.name ?? res.status}${error.message ? ` (${error.message})` : ''}`,
    };
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

  private async readBatch(batchId: string): Promise<Batch> {
    const res = await this.call('GET', `/v1/payments/payouts/${encodeURIComponent(batchId)}`);
    if (res.status !== 200) {
      // 404 for a batch id PayPal itself gave us is not a reason to refund.
      throw new RailUnavailableError(`paypal get payout batch answered ${res.status}`);
    }
    const parsed = batchSchema.safeParse(res.body);
    if (!parsed.success) throw new RailUnavailableError('paypal get payout batch answered an unexpected body');
    return parsed.data;
  }

  /** One authenticated JSON call. Network errors, timeouts, 429 and 5xx throw (transient). */
  private async call(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: unknown }> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.accessToken();
      const res = await this.fetch(path, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (res.status === 401 && attempt === 0) {
        // Revoked or expired early: one fresh token, then the answer stands.
        this.token = undefined;
        continue;
      }
      if (res.status === 408 || res.status === 429 || res.status >= 500) {
        throw new RailUnavailableError(`paypal ${method} ${path.split('/').slice(0, 4).join('/')} answered ${res.status}`);
      }
      return { status: res.status, body: await readJson(res) };
    }
  }

  /** OAuth2 client-credentials token, cached until shortly before it expires; one request at a time. */
  private async accessToken(): Promise<string> {
    if (this.token && this.token.expiresAt > this.now()) return this.token.value;
    this.tokenRequest ??= this.requestToken().finally(() => {
      this.tokenRequest = undefined;
    });
    return this.tokenRequest;
  }

  private async requestToken(): Promise<string> {
    const { clientId, clientSecret } = await this.loadCredentials();
    const res = await this.fetch('/v1/oauth2/token', {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: 'grant_type=client_credentials',
    });
    if (res.status === 401 || res.status === 403) throw new RailConfigError(`paypal refused the client credentials (${res.status})`);
    if (res.status !== 200) throw new RailUnavailableError(`paypal token endpoint answered ${res.status}`);
    const parsed = tokenSchema.safeParse(await readJson(res));
    if (!parsed.success) throw new RailUnavailableError('paypal token endpoint answered an unexpected body');
    const lifetimeMs = parsed.data.expires_in * 1000;
    this.token = { value: parsed.data.access_token, expiresAt: this.now() + lifetimeMs - Math.min(TOKEN_MARGIN_MS, lifetimeMs / 2) };
    return this.token.value;
  }

  private async fetch(path: string, init: RequestInit): Promise<Response> {
    const baseUrl = (this.options.baseUrl ?? config().PAYPAL_BASE_URL)?.replace(/\/+$/, '');
    if (!baseUrl) throw new RailConfigError('PAYPAL_BASE_URL is not set');
    try {
      return await fetch(`${baseUrl}${path}`, { ...init, signal: AbortSignal.timeout(this.requestTimeoutMs) });
    } catch (error) {
      throw new RailUnavailableError(`paypal ${init.method ?? 'GET'} request failed`, { cause: error });
    }
  }

  private loadCredentials(): Promise<PaypalCredentials> {
    this.credentials ??= (this.options.credentials ?? defaultCredentials)().catch((error: unknown) => {
      this.credentials = undefined;
      throw error;
    });
    return this.credentials;
  }
}

/** EMAIL for an e-mail address, PAYPAL_ID for a 13-character payer id; anything else is refused. */
export function recipientTypeOf(destination: string): 'EMAIL' | 'PAYPAL_ID' | undefined {
  if (destination.length <= 254 && EMAIL.test(destination)) return 'EMAIL';
  if (PAYER_ID.test(destination)) return 'PAYPAL_ID';
  return undefined;
}

/** Cents → PayPal's amount text, always two decimals (`970` → `"9.70"`). */
export function centsToDecimal(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

function outcomeOf(batch: Batch, payoutId: string, batchId: string): { kind: RailOutcome['kind']; settling: boolean; result: RailOutcome } {
  const batchStatus = batch.batch_header.batch_status;
  if (batchStatus === 'DENIED' || batchStatus === 'CANCELED') {
    return { kind: 'failed', settling: false, result: { kind: 'failed', reason: `paypal batch ${batchStatus}`, externalId: batchId } };
  }
  const items = batch.items ?? [];
  const item = items.find((i) => i.payout_item?.sender_item_id === payoutId) ?? items[0];
  const status = item?.transaction_status;
  if (status === 'SUCCESS') return { kind: 'completed', settling: false, result: { kind: 'completed', externalId: batchId } };
  if (status && FINAL_FAILURES.has(status)) {
    const why = item?.errors?.name ? ` (${item.errors.name})` : '';
    return { kind: 'failed', settling: false, result: { kind: 'failed', reason: `paypal item ${status}${why}`, externalId: batchId } };
  }
  return { kind: 'pending', settling: !status || SETTLING.has(status), result: { kind: 'pending', externalId: batchId } };
}

function isDuplicate(error: PaypalError): boolean {
  if (error.name?.includes('DUPLICATE')) return true;
  return (error.details ?? []).some(
    (d) => /sender_batch_id/i.test(d.field ?? '') || /duplicate|already exists|sender_batch_id/i.test(d.issue ?? ''),
  );
}

function batchIdFromLinks(error: PaypalError): string | undefined {
  for (const link of error.links ?? []) {
    const match = /\/v1\/payments\/payouts\/([^/?#]+)/.exec(link.href);
    if (match?.[1]) return decodeURIComponent(match[1]);
  }
  return undefined;
}

function readCheckpoint(saved: RailState | undefined): z.infer<typeof savedSchema> | undefined {
  if (saved === undefined) return undefined;
  const parsed = savedSchema.safeParse(saved);
  if (!parsed.success) throw new CheckpointError('saved rail state is not a PayPal checkpoint');
  return parsed.data;
}

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function defaultCredentials(): Promise<PaypalCredentials> {
  const { PAYPAL_CLIENT_ID, PAYPAL_CLIENT_SECRET, PAYPAL_CREDENTIALS_SECRET_ARN } = config();
  if (PAYPAL_CLIENT_ID && PAYPAL_CLIENT_SECRET) return { clientId: PAYPAL_CLIENT_ID, clientSecret: PAYPAL_CLIENT_SECRET };
  if (PAYPAL_CREDENTIALS_SECRET_ARN) {
    const parsed = z
      .object({ clientId: z.string().min(1), clientSecret: z.string().min(1) })
      .safeParse(safeJson(await readSecretString(PAYPAL_CREDENTIALS_SECRET_ARN)));
    if (!parsed.success) throw new RailConfigError('PAYPAL_CREDENTIALS_SECRET_ARN must hold {"clientId", "clientSecret"}');
    return parsed.data;
  }
  throw new RailConfigError('PayPal credentials are not configured (PAYPAL_CLIENT_ID/SECRET or PAYPAL_CREDENTIALS_SECRET_ARN)');
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
