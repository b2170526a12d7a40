/**
 * The PayPal rail against the local imitation of the Payouts API (bin/local/paypal-sandbox.ts),
 * over real HTTP: OAuth2 token, create batch with sender_batch_id de-duplication, read batch.
 */
import { randomUUID } from 'node:crypto';
import { type PaypalSandbox, startPaypalSandbox } from '../../bin/local/paypal-sandbox';
import { PlatformFundsError, RailAmbiguousAnswerError, RailUnavailableError } from '../../functions/rails/errors';
import { PaypalRail, type PaypalRailOptions } from '../../functions/rails/paypal.rail';
import type { PayoutInstruction } from '../../functions/rails/rail';
import { MemoryCheckpoint } from './checkpoint';

let sandbox: PaypalSandbox;

beforeAll(async () => {
  sandbox = await startPaypalSandbox();
});
afterAll(async () => {
  await sandbox.stop();
});

function newRail(options: PaypalRailOptions = {}): PaypalRail {
  return new PaypalRail({
    baseUrl: sandbox.url,
    credentials: async () => ({ clientId: sandbox.clientId, clientSecret: sandbox.clientSecret }),
    requestTimeoutMs: 1_000, // short enough for the timeout tests, long enough for a loaded CI machine
    settleTimeoutMs: 100,
    pollIntervalMs: 20,
    ...options,
  });
}

function payout(destination: string, netAmount = 971): PayoutInstruction {
  return { payoutId: `po_${randomUUID()}`, currency: 'USD', netAmount, destination };
}

/** What the rail saves right before a create leaves (a create was sent: PayPal may hold a batch). */
const SENT = { rail: 'paypal', createSentAt: expect.any(String) };

const email = (local: string) => `${local}+${randomUUID().slice(0, 8)}@example.com`;

describe('PayPal rail', () => {
  let rail: PaypalRail;
  beforeEach(() => {
    rail = newRail();
  });

  it('pays an e-mail receiver: one batch named by the payout id, completed with its batch id', async () => {
    const instruction = payout(email('success'));
    const checkpoint = new MemoryCheckpoint();

    const outcome = await rail.pay(instruction, checkpoint);

    const batch = sandbox.batchBySenderId(instruction.payoutId);
    expect(batch).toBeDefined();
    expect(outcome).toEqual({ kind: 'completed', externalId: batch?.payoutBatchId });
    // That a create was sent, saved before it left, then the batch it made.
    expect(checkpoint.saves).toEqual([SENT, { rail: 'paypal', batchId: batch?.payoutBatchId }]);
    expect(batch?.items).toEqual([
      expect.objectContaining({
        recipientType: 'EMAIL',
        receiver: instruction.destination,
        amount: { value: '9.71', currency: 'USD' },
        senderItemId: instruction.payoutId,
        status: 'SUCCESS',
      }),
    ]);
  });

  it('pays a PayPal payer id as PAYPAL_ID and always sends two decimals', async () => {
    const instruction = payout('N8HQ3A6WXZ2PL', 970);
    expect((await rail.pay(instruction, new MemoryCheckpoint())).kind).toBe('completed');
    expect(sandbox.batchBySenderId(instruction.payoutId)?.items[0]).toMatchObject({
      recipientType: 'PAYPAL_ID',
      amount: { value: '9.70', currency: 'USD' },
    });
  });

  it('answers a redelivery after completion by reading the batch, creating nothing', async () => {
    const instruction = payout(email('success'));
    const checkpoint = new MemoryCheckpoint();
    const first = await rail.pay(instruction, checkpoint);
    const creates = sandbox.createRequests();

    const again = checkpoint.redeliver();
    expect(await rail.pay(instruction, again)).toEqual(first);
    expect(sandbox.createRequests()).toBe(creates);
    expect(again.saves).toHaveLength(0);
  });

  it('crash between PayPal accepting and the checkpoint save: the retry is refused as a duplicate and follows its link', async () => {
    const instruction = payout(email('success'));
    await rail.pay(instruction, new MemoryCheckpoint()); // its save is "lost" with the crashed process
    const original = sandbox.batchBySenderId(instruction.payoutId);

    const retry = new MemoryCheckpoint();
    const outcome = await rail.pay(instruction, retry);

    expect(outcome).toEqual({ kind: 'completed', externalId: original?.payoutBatchId });
    expect(retry.saves).toEqual([SENT, { rail: 'paypal', batchId: original?.payoutBatchId }]);
    expect(sandbox.batches().filter((b) => b.senderBatchId === instruction.payoutId)).toHaveLength(1);
  });

  it('a create whose response was lost: the retry follows the link PayPal puts only in details[].link, no second payout', async () => {
    const instruction = payout(email('lost'));
    const checkpoint = new MemoryCheckpoint();

    await expect(rail.pay(instruction, checkpoint)).rejects.toBeInstanceOf(RailUnavailableError);
    expect(checkpoint.saves).toEqual([SENT]);
    const created = sandbox.batchBySenderId(instruction.payoutId);
    expect(created).toBeDefined();

    const again = checkpoint.redeliver();
    const outcome = await rail.pay(instruction, again);
    expect(outcome).toEqual({ kind: 'completed', externalId: created?.payoutBatchId });
    expect(again.saves).toEqual([{ rail: 'paypal', batchId: created?.payoutBatchId }]);
    expect(sandbox.batches().filter((b) => b.senderBatchId === instruction.payoutId)).toHaveLength(1);
  });

  it('the imitation answers a duplicate as PayPal does: the batch link in details[0].link, top-level links empty', async () => {
    const instruction = payout(email('success'));
    await rail.pay(instruction, new MemoryCheckpoint());
    const token = await fetch(`${sandbox.url}/v1/oauth2/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${sandbox.clientId}:${sandbox.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    }).then(async (r) => ((await r.json()) as { access_token: string }).access_token);
    const res = await fetch(`${sandbox.url}/v1/payments/payouts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sender_batch_header: { sender_batch_id: instruction.payoutId },
        items: [{ recipient_type: 'EMAIL', amount: { value: '1.00', currency: 'USD' }, receiver: instruction.destination }],
      }),
    });
    const batchId = sandbox.batchBySenderId(instruction.payoutId)?.payoutBatchId;
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      name: 'USER_BUSINESS_ERROR',
      details: [
        {
          field: 'SENDER_BATCH_ID',
          issue: 'Batch with given sender_batch_id already exists',
          link: [{ href: `${sandbox.url}/v1/payments/payouts/${batchId}`, rel: 'self' }],
        },
      ],
      links: [],
    });
  });

  it('a duplicate without any link to the batch throws RailAmbiguousAnswerError on every retry: no refund, no second batch', async () => {
    const instruction = payout(email('nolink'));
    const checkpoint = new MemoryCheckpoint();
    await expect(rail.pay(instruction, checkpoint)).rejects.toBeInstanceOf(RailUnavailableError); // the answer is lost
    expect(sandbox.batchBySenderId(instruction.payoutId)).toBeDefined();

    for (let i = 0; i < 2; i++) {
      const again = checkpoint.redeliver();
      const error = await rail.pay(instruction, again).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RailAmbiguousAnswerError);
      expect(error).toMatchObject({ name: 'RailAmbiguousAnswerError', message: expect.stringContaining(instruction.payoutId) });
      expect(again.saves).toHaveLength(0);
    }
    expect(sandbox.batches().filter((b) => b.senderBatchId === instruction.payoutId)).toHaveLength(1);
  });

  it.each([
    'failed',
    'returned',
    'blocked',
    'refunded',
    'reversed',
  ])('fails a payout whose item is %s, with the batch id', async (status) => {
    const instruction = payout(email(status));
    const outcome = await rail.pay(instruction, new MemoryCheckpoint());
    expect(outcome).toMatchObject({
      kind: 'failed',
      reason: expect.stringContaining(status.toUpperCase()),
      externalId: sandbox.batchBySenderId(instruction.payoutId)?.payoutBatchId,
    });
  });

  it.each(['unclaimed', 'onhold', 'pending'])('leaves an item that is %s pending', async (status) => {
    const instruction = payout(email(status));
    const outcome = await rail.pay(instruction, new MemoryCheckpoint());
    expect(outcome).toEqual({ kind: 'pending', externalId: sandbox.batchBySenderId(instruction.payoutId)?.payoutBatchId });
  });

  it('completes an unclaimed payout once the recipient claims it, and fails one PayPal returns', async () => {
    const claimed = payout(email('unclaimed'));
    const returned = payout(email('unclaimed'));
    const claimedCheckpoint = new MemoryCheckpoint();
    const returnedCheckpoint = new MemoryCheckpoint();
    await rail.pay(claimed, claimedCheckpoint);
    await rail.pay(returned, returnedCheckpoint);
    const creates = sandbox.createRequests();

    sandbox.setItemStatus(String(claimedCheckpoint.saved?.batchId), 'SUCCESS');
    sandbox.setItemStatus(String(returnedCheckpoint.saved?.batchId), 'RETURNED');

    expect(await rail.pay(claimed, claimedCheckpoint.redeliver())).toMatchObject({ kind: 'completed' });
    expect(await rail.pay(returned, returnedCheckpoint.redeliver())).toMatchObject({ kind: 'failed' });
    expect(sandbox.createRequests()).toBe(creates);
  });

  it('fails a payout PayPal refuses at creation (validation), since nothing was created', async () => {
    const instruction = payout(email('rejected'));
    const outcome = await rail.pay(instruction, new MemoryCheckpoint());
    expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringContaining('VALIDATION_ERROR') });
    expect(sandbox.batchBySenderId(instruction.payoutId)).toBeUndefined();
  });

  it('fails a payout PayPal refuses as a malformed request (400 INVALID_REQUEST), since nothing was created', async () => {
    const instruction = payout(email('success'));
    sandbox.failNext('create', 1, 400);
    const outcome = await rail.pay(instruction, new MemoryCheckpoint());
    expect(outcome).toMatchObject({ kind: 'failed', reason: expect.stringContaining('INVALID_REQUEST') });
    expect(sandbox.batchBySenderId(instruction.payoutId)).toBeUndefined();
  });

  it.each([
    [404, 'RESOURCE_NOT_FOUND'],
    [409, 'RESOURCE_CONFLICT'],
    [422, 'UNPROCESSABLE_ENTITY'],
    [418, 'UNKNOWN_ERROR'],
  ])('a create answered %i %s (not a known refusal) is not refunded: it throws RailAmbiguousAnswerError, and the retry pays once', async (status, name) => {
    const instruction = payout(email('success'));
    const checkpoint = new MemoryCheckpoint();
    sandbox.failNext('create', 1, status);

    const error = await rail.pay(instruction, checkpoint).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RailAmbiguousAnswerError);
    expect(String((error as Error).message)).toContain(`${status} ${name}`);
    expect(checkpoint.saves).toEqual([SENT]);

    expect(await rail.pay(instruction, checkpoint.redeliver())).toMatchObject({ kind: 'completed' });
    expect(sandbox.batches().filter((b) => b.senderBatchId === instruction.payoutId)).toHaveLength(1);
  });

  it('fails an invalid PayPal account without calling PayPal', async () => {
    const creates = sandbox.createRequests();
    const checkpoint = new MemoryCheckpoint();
    expect(await rail.pay(payout('not an account'), checkpoint)).toEqual({ kind: 'failed', reason: 'invalid paypal account' });
    expect(sandbox.createRequests()).toBe(creates);
    expect(checkpoint.saves).toHaveLength(0);
  });

  it('throws PlatformFundsError when the platform PayPal balance is too low (no refund, retried later)', async () => {
    await expect(rail.pay(payout(email('insufficient')), new MemoryCheckpoint())).rejects.toBeInstanceOf(PlatformFundsError);
  });

  it('throws (transient) on a 5xx from create; the retry pays once', async () => {
    const instruction = payout(email('success'));
    sandbox.failNext('create', 1, 500);
    await expect(rail.pay(instruction, new MemoryCheckpoint())).rejects.toBeInstanceOf(RailUnavailableError);
    expect(sandbox.batchBySenderId(instruction.payoutId)).toBeUndefined();

    expect((await rail.pay(instruction, new MemoryCheckpoint())).kind).toBe('completed');
    expect(sandbox.batches().filter((b) => b.senderBatchId === instruction.payoutId)).toHaveLength(1);
  });

  it('throws (transient) when PayPal does not answer in time', async () => {
    const started = Date.now();
    const instruction = payout(email('timeout'));
    await expect(rail.pay(instruction, new MemoryCheckpoint())).rejects.toBeInstanceOf(RailUnavailableError);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(sandbox.batchBySenderId(instruction.payoutId)).toBeUndefined();
  });

  it('a 5xx while reading the batch throws after the batch id was saved; the redelivery only reads', async () => {
    const instruction = payout(email('success'));
    const checkpoint = new MemoryCheckpoint();
    sandbox.failNext('get-batch', 1, 503);

    await expect(rail.pay(instruction, checkpoint)).rejects.toBeInstanceOf(RailUnavailableError);
    expect(checkpoint.saved).toEqual({ rail: 'paypal', batchId: sandbox.batchBySenderId(instruction.payoutId)?.payoutBatchId });
    const creates = sandbox.createRequests();

    expect((await rail.pay(instruction, checkpoint.redeliver())).kind).toBe('completed');
    expect(sandbox.createRequests()).toBe(creates);
  });
});

describe('PayPal rail OAuth2 token', () => {
  it('is fetched once and reused across payouts', async () => {
    const rail = newRail();
    const before = sandbox.tokenRequests();
    await Promise.all([1, 2, 3].map(() => rail.pay(payout(email('success')), new MemoryCheckpoint())));
    await rail.pay(payout(email('success')), new MemoryCheckpoint());
    expect(sandbox.tokenRequests() - before).toBe(1);
  });

  it('is fetched again once it is about to expire', async () => {
    let now = Date.now();
    const rail = newRail({ now: () => now });
    const before = sandbox.tokenRequests();
    await rail.pay(payout(email('success')), new MemoryCheckpoint());
    now += 9 * 3600 * 1000 - 61_000; // PayPal's tokens last 9 h; refreshed in their last minute
    await rail.pay(payout(email('success')), new MemoryCheckpoint());
    expect(sandbox.tokenRequests() - before).toBe(1);
    now += 2_000;
    await rail.pay(payout(email('success')), new MemoryCheckpoint());
    expect(sandbox.tokenRequests() - before).toBe(2);
  });

  it('is replaced once when PayPal answers 401, and the call goes through', async () => {
    const rail = newRail();
    await rail.pay(payout(email('success')), new MemoryCheckpoint());
    const before = sandbox.tokenRequests();
    sandbox.revokeTokens();
    expect((await rail.pay(payout(email('success')), new MemoryCheckpoint())).kind).toBe('completed');
    expect(sandbox.tokenRequests() - before).toBe(1);
  });

  it('an unavailable token endpoint is a transient error', async () => {
    const rail = newRail();
    sandbox.failNext('token', 1, 503);
    await expect(rail.pay(payout(email('success')), new MemoryCheckpoint())).rejects.toBeInstanceOf(RailUnavailableError);
  });
});

describe('PayPal rail and a payout that may not be paid now (its agent disabled: docs/payouts.md, "Held payouts")', () => {
  const refuse = async () => false;

  it('answers held and sends nothing while no create was ever sent', async () => {
    const rail = newRail();
    const instruction = { ...payout(email('success')), mayPay: refuse };
    const creates = sandbox.createRequests();
    const checkpoint = new MemoryCheckpoint();
    expect(await rail.pay(instruction, checkpoint)).toEqual({ kind: 'held' });
    expect(checkpoint.saves).toHaveLength(0);
    expect(sandbox.createRequests()).toBe(creates);
    expect(sandbox.batchBySenderId(instruction.payoutId)).toBeUndefined();
  });

  it('a token endpoint that was down sent nothing: the next attempt may still hold it', async () => {
    const rail = newRail();
    const instruction = payout(email('success'));
    const checkpoint = new MemoryCheckpoint();
    sandbox.failNext('token', 1, 503);
    await expect(rail.pay(instruction, checkpoint)).rejects.toBeInstanceOf(RailUnavailableError);
    expect(checkpoint.saves).toHaveLength(0);
    expect(await rail.pay({ ...instruction, mayPay: refuse }, checkpoint.redeliver())).toEqual({ kind: 'held' });
    expect(sandbox.batchBySenderId(instruction.payoutId)).toBeUndefined();
  });

  it('once a create was sent and its answer lost, sends it again whatever mayPay says: PayPal may hold a batch', async () => {
    const rail = newRail();
    const instruction = payout(email('lost'));
    const checkpoint = new MemoryCheckpoint();
    await expect(rail.pay(instruction, checkpoint)).rejects.toBeInstanceOf(RailUnavailableError);
    const created = sandbox.batchBySenderId(instruction.payoutId);
    expect(created).toBeDefined();
    // Holding it now could cancel a payout PayPal is paying: the duplicate's link tells.
    expect(await rail.pay({ ...instruction, mayPay: refuse }, checkpoint.redeliver())).toEqual({
      kind: 'completed',
      externalId: created?.payoutBatchId,
    });
    expect(sandbox.batches().filter((b) => b.senderBatchId === instruction.payoutId)).toHaveLength(1);
  });

  it('does not ask before reading a batch it knows', async () => {
    const rail = newRail();
    const instruction = payout(email('success'));
    const checkpoint = new MemoryCheckpoint();
    await rail.pay(instruction, checkpoint);
    let asked = 0;
    const outcome = await rail.pay(
      {
        ...instruction,
        mayPay: async () => {
          asked += 1;
          return false;
        },
      },
      checkpoint.redeliver(),
    );
    expect([outcome.kind, asked]).toEqual(['completed', 0]);
  });
});
