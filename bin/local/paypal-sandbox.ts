/**
 * A local imitation of the PayPal Payouts API (v1), as documented: OAuth2 client credentials,
 * create batch payout with `sender_batch_id` de-duplication, show batch, show item. It is NOT
 * PayPal's sandbox: no accounts, balances, e-mails, currency conversion or risk checks, and only
 * the fields the payout rail reads are filled with care.
 *
 * What happens to a payout item is chosen by the receiver's e-mail local part (before any `+`):
 *   success (or anything else) → SUCCESS
 *   fail / failed, returned, blocked, refunded, reversed → that final status (FAILED has errors)
 *   unclaimed, onhold, pending → that non-final status (change it with `setItemStatus`)
 *   rejected      → the create answers 400 VALIDATION_ERROR (nothing created)
 *   insufficient  → the create answers 422 INSUFFICIENT_FUNDS (nothing created)
 *   http500       → the create answers 500 (nothing created)
 *   timeout       → the create never answers (nothing created)
 *   lost          → the batch is created (SUCCESS) but the create never answers: the response is lost
 * A PAYPAL_ID receiver always succeeds. Faults on any route: `failNext(route, n, status)`.
 * `PayPal-Request-Id` is ignored, deliberately: the rail must be safe on `sender_batch_id` alone.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';

export type ItemStatus = 'SUCCESS' | 'FAILED' | 'PENDING' | 'UNCLAIMED' | 'RETURNED' | 'ONHOLD' | 'BLOCKED' | 'REFUNDED' | 'REVERSED';
export type SandboxRoute = 'token' | 'create' | 'get-batch' | 'get-item';

export interface SandboxItem {
  payoutItemId: string;
  transactionId: string;
  status: ItemStatus;
  recipientType: string;
  receiver: string;
  amount: { value: string; currency: string };
  senderItemId: string | undefined;
  note: string | undefined;
}

export interface SandboxBatch {
  payoutBatchId: string;
  senderBatchId: string;
  emailSubject: string | undefined;
  emailMessage: string | undefined;
  createdAt: string;
  items: SandboxItem[];
}

export interface PaypalSandboxOptions {
  port?: number;
  clientId?: string;
  clientSecret?: string;
  /** `expires_in` of issued tokens (PayPal's are about 9 hours). */
  tokenTtlSeconds?: number;
  /** Keep batches in this file across restarts (npm start); in memory when unset. */
  stateFile?: string;
}

export interface PaypalSandbox {
  url: string;
  clientId: string;
  clientSecret: string;
  /** How many tokens were issued. */
  tokenRequests(): number;
  /** How many create-payout requests arrived (including rejected duplicates). */
  createRequests(): number;
  batches(): readonly SandboxBatch[];
  batchBySenderId(senderBatchId: string): SandboxBatch | undefined;
  /** Moves every item of a batch to `status` (a recipient claims, PayPal returns, …). */
  setItemStatus(payoutBatchId: string, status: ItemStatus): void;
  /** The next `n` requests to `route` answer `status` (default 503) without doing anything. */
  failNext(route: SandboxRoute, n?: number, status?: number): void;
  /** Invalidates every issued token (the next API call gets 401). */
  revokeTokens(): void;
  stop(): Promise<void>;
}

const FINAL_BY_NAME: Record<string, ItemStatus> = {
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

export async function startPaypalSandbox(opts: PaypalSandboxOptions = {}): Promise<PaypalSandbox> {
  const clientId = opts.clientId ?? `local-client-${randomBytes(6).toString('hex')}`;
  const clientSecret = opts.clientSecret ?? randomBytes(24).toString('base64url');
  const ttl = opts.tokenTtlSeconds ?? 32_400;
  const tokens = new Map<string, number>();
  const batches = new Map<string, SandboxBatch>();
  const bySender = new Map<string, string>();
  const faults = new Map<SandboxRoute, { n: number; status: number }>();
  let issued = 0;
  let creates = 0;
  let url = '';

  if (opts.stateFile && existsSync(opts.stateFile)) {
    for (const batch of JSON.parse(readFileSync(opts.stateFile, 'utf8')) as SandboxBatch[]) {
      batches.set(batch.payoutBatchId, batch);
      bySender.set(batch.senderBatchId, batch.payoutBatchId);
    }
  }
  const persist = () => {
    if (!opts.stateFile) return;
    mkdirSync(dirname(opts.stateFile), { recursive: true });
    writeFileSync(`${opts.stateFile}.tmp`, JSON.stringify([...batches.values()], null, 2));
    renameSync(`${opts.stateFile}.tmp`, opts.stateFile);
  };

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => send(res, 500, { name: 'INTERNAL_SERVER_ERROR', message: 'An internal server error has occurred.' }));
  });
  server.keepAliveTimeout = 5_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const method = req.method ?? 'GET';

    if (method === 'POST' && path === '/v1/oauth2/token') {
      if (fault('token', res)) return;
      const [scheme, encoded] = (req.headers.authorization ?? '').split(' ');
      const [id, secret] = Buffer.from(encoded ?? '', 'base64')
        .toString('utf8')
        .split(':');
      if (scheme !== 'Basic' || id !== clientId || secret !== clientSecret) {
        return send(res, 401, { error: 'invalid_client', error_description: 'Client Authentication failed' });
      }
      if (new URLSearchParams(body).get('grant_type') !== 'client_credentials') {
        return send(res, 400, { error: 'unsupported_grant_type', error_description: 'Grant Type is NULL' });
      }
      const token = `A21AA${randomBytes(32).toString('base64url')}`;
      tokens.set(token, Date.now() + ttl * 1000);
      issued += 1;
      return send(res, 200, {
        scope: 'https://uri.paypal.com/services/payments/payouts',
        access_token: token,
        token_type: 'Bearer',
        app_id: 'APP-LOCAL',
        expires_in: ttl,
        nonce: `${new Date().toISOString()}${randomBytes(8).toString('hex')}`,
      });
    }

    const [scheme, token] = (req.headers.authorization ?? '').split(' ');
    const expires = token ? tokens.get(token) : undefined;
    if (scheme !== 'Bearer' || expires === undefined || expires <= Date.now()) {
      return send(res, 401, { error: 'invalid_token', error_description: 'Token signature verification failed' });
    }

    if (method === 'POST' && path === '/v1/payments/payouts') {
      if (fault('create', res)) return;
      creates += 1;
      return create(body, res);
    }
    const batchMatch = /^\/v1\/payments\/payouts\/([^/]+)$/.exec(path);
    if (method === 'GET' && batchMatch?.[1]) {
      if (fault('get-batch', res)) return;
      const batch = batches.get(decodeURIComponent(batchMatch[1]));
      return batch ? send(res, 200, batchView(batch)) : notFound(res);
    }
    const itemMatch = /^\/v1\/payments\/payouts-item\/([^/]+)$/.exec(path);
    if (method === 'GET' && itemMatch?.[1]) {
      if (fault('get-item', res)) return;
      const id = decodeURIComponent(itemMatch[1]);
      for (const batch of batches.values()) {
        const item = batch.items.find((i) => i.payoutItemId === id);
        if (item) return send(res, 200, { ...itemView(batch, item), sender_batch_id: batch.senderBatchId });
      }
      return notFound(res);
    }
    return send(res, 404, { name: 'NOT_FOUND', message: 'The specified resource does not exist.' });
  }

  function create(text: string, res: ServerResponse) {
    let request: {
      sender_batch_header?: { sender_batch_id?: unknown; recipient_type?: unknown; email_subject?: unknown; email_message?: unknown };
      items?: unknown;
    };
    try {
      request = JSON.parse(text) as typeof request;
    } catch {
      return validation(res, [{ field: 'body', issue: 'MALFORMED_REQUEST_JSON' }]);
    }
    const header = request.sender_batch_header ?? {};
    const senderBatchId = typeof header.sender_batch_id === 'string' ? header.sender_batch_id : undefined;
    const rawItems = Array.isArray(request.items) ? (request.items as Record<string, unknown>[]) : [];
    if (!senderBatchId) return validation(res, [{ field: 'sender_batch_header.sender_batch_id', issue: 'Required field is missing' }]);
    if (rawItems.length === 0) return validation(res, [{ field: 'items', issue: 'Required field is missing' }]);

    const existing = bySender.get(senderBatchId);
    if (existing) {
      return send(res, 400, {
        name: 'USER_BUSINESS_ERROR',
        message: 'User business error.',
        debug_id: debugId(),
        information_link: 'https://developer.paypal.com/docs/api/payments.payouts-batch/#errors',
        details: [
          { field: 'SENDER_BATCH_ID', location: 'body', issue: `Batch with given sender_batch_id ${senderBatchId} already exists` },
        ],
        links: [{ href: `${url}/v1/payments/payouts/${existing}`, rel: 'self', method: 'GET', encType: 'application/json' }],
      });
    }

    const items: SandboxItem[] = [];
    const problems: { field: string; issue: string }[] = [];
    rawItems.forEach((raw, i) => {
      const amount = raw.amount as { value?: unknown; currency?: unknown } | undefined;
      const recipientType = typeof raw.recipient_type === 'string' ? raw.recipient_type : header.recipient_type;
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
      const local = receiver.split('@')[0]?.split('+')[0]?.toLowerCase() ?? '';
      if (!receiver || local === 'rejected')
        problems.push({ field: `items[${i}].receiver`, issue: 'Receiver is invalid or does not match with type' });
      items.push({
        payoutItemId: paypalId(),
        transactionId: paypalId(17),
        status: recipientType === 'EMAIL' ? (FINAL_BY_NAME[local] ?? 'SUCCESS') : 'SUCCESS',
        recipientType: String(recipientType),
        receiver,
        amount: { value: String(amount?.value), currency: String(amount?.currency) },
        senderItemId: typeof raw.sender_item_id === 'string' ? raw.sender_item_id : undefined,
        note: typeof raw.note === 'string' ? raw.note : undefined,
      });
    });
    if (problems.length > 0) return validation(res, problems);

    const locals = new Set(items.map((i) => i.receiver.split('@')[0]?.split('+')[0]?.toLowerCase()));
    if (locals.has('timeout')) return; // never answers, creates nothing
    if (locals.has('http500'))
      return send(res, 500, { name: 'INTERNAL_SERVER_ERROR', message: 'An internal server error has occurred.', debug_id: debugId() });
    if (locals.has('insufficient')) {
      return send(res, 422, {
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
    batches.set(batch.payoutBatchId, batch);
    bySender.set(senderBatchId, batch.payoutBatchId);
    persist();
    if (locals.has('lost')) return; // created, but the answer never arrives
    send(res, 201, {
      batch_header: {
        payout_batch_id: batch.payoutBatchId,
        batch_status: 'PENDING',
        sender_batch_header: { sender_batch_id: senderBatchId, email_subject: batch.emailSubject, email_message: batch.emailMessage },
      },
      links: [{ href: `${url}/v1/payments/payouts/${batch.payoutBatchId}`, rel: 'self', method: 'GET', encType: 'application/json' }],
    });
  }

  function batchView(batch: SandboxBatch) {
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
      items: batch.items.map((item) => itemView(batch, item)),
      links: [{ href: `${url}/v1/payments/payouts/${batch.payoutBatchId}`, rel: 'self', method: 'GET', encType: 'application/json' }],
    };
  }

  function itemView(batch: SandboxBatch, item: SandboxItem) {
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

  function fault(route: SandboxRoute, res: ServerResponse): boolean {
    const f = faults.get(route);
    if (!f || f.n <= 0) return false;
    f.n -= 1;
    send(res, f.status, { name: 'SERVICE_UNAVAILABLE', message: 'Injected fault.', debug_id: debugId() });
    return true;
  }

  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
  url = `http://127.0.0.1:${port}`;

  return {
    url,
    clientId,
    clientSecret,
    tokenRequests: () => issued,
    createRequests: () => creates,
    batches: () => [...batches.values()],
    batchBySenderId: (senderBatchId) => {
      const id = bySender.get(senderBatchId);
      return id ? batches.get(id) : undefined;
    },
    setItemStatus: (payoutBatchId, status) => {
      const batch = batches.get(payoutBatchId);
      if (!batch) throw new Error(`no batch ${payoutBatchId}`);
      for (const item of batch.items) item.status = status;
      persist();
    },
    failNext: (route, n = 1, status = 503) => faults.set(route, { n, status }),
    revokeTokens: () => tokens.clear(),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'paypal-debug-id': debugId() });
  res.end(JSON.stringify(body));
}

function notFound(res: ServerResponse): void {
  send(res, 404, { name: 'INVALID_RESOURCE_ID', message: 'Requested resource ID was not found.', debug_id: debugId() });
}

function validation(res: ServerResponse, details: { field: string; issue: string }[]): void {
  send(res, 400, {
    name: 'VALIDATION_ERROR',
    message: 'Invalid request - see details',
    debug_id: debugId(),
    information_link: 'https://developer.paypal.com/docs/api/payments.payouts-batch/#errors',
    details: details.map((d) => ({ ...d, location: 'body' })),
    links: [],
  });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';

/** PayPal-style id: upper-case letters and digits. */
function paypalId(length = 13): string {
  return [...randomBytes(length)].map((b) => ALPHABET[b % ALPHABET.length]).join('');
}

function debugId(): string {
  return randomBytes(7).toString('hex').slice(0, 13);
}
