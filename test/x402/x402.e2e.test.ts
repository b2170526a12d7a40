/**
 * x402 end to end (DESIGN §17, docs/x402.md): the stock seller middleware (express +
 * @x402/express, pointed at `<base>/x402` with the agent key) and the stock buyer client
 * (@x402/fetch with @x402/svm's client scheme, paying from the local chain's demo payer) against
 * the local test stack: 402, pay, 200 with PAYMENT-RESPONSE, the agent credited once. The seller's
 * middleware is configured from GET /api/v1/agents/x402 as docs/x402.md's seller is (its `extra.memo`
 * names the agent as the seller). Replays, another agent, the service's policy, authentication,
 * concurrent settles, and the process dying between
 * the on-chain confirmation and the credit, an agent whose balance is at its cap. The ledger audit
 * holds after every test.
 */
import { createHash, randomBytes } from 'node:crypto';
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createKeyPairSignerFromBytes, getBase64Encoder, getTransactionDecoder } from '@solana/kit';
import type { PaymentPayload, PaymentRequired, SettleResponse } from '@x402/core/types';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import bs58 from 'bs58';
import { config } from '../../functions/config';
import { StoredReply } from '../../functions/contracts/api';
import { MAX_BALANCE_MINOR } from '../../functions/core/money';
import { X402_BALANCE_LIMIT_LOG_MESSAGE } from '../../functions/observability/metric-names';
import { railFor } from '../../functions/rails';
import { createReconciler } from '../../functions/reconciler/reconciler';
import { db } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { claimSettlement, toSettlement } from '../../functions/store/x402-facilitator/x402.repository';
import { creditConfirmed } from '../../functions/use-cases/x402-facilitator/x402-credit';
import { checkX402Finality, reconcileX402 } from '../../functions/use-cases/x402-facilitator/x402-reconcile';
import { readOnlyFacilitator } from '../../functions/x402/facilitator';
import { crash, inject } from '../faults/inject';
import { expectLedgerBalanced } from '../support/audit';
import { errorLines } from '../support/log-lines';
import { useTestStack } from '../support/stack';
import { type SellerRoute, startServiceSeller } from '../support/x402';

const t = useTestStack();
let seller: { key: string; id: string };
let sellerUrl: string;
let closeSeller: () => Promise<void>;
let network: `${string}:${string}`;
let payTo: string;
let buyer: x402Client;

const PRICE = '$0.01';

/** The seller of docs/x402.md ("Get paid by x402 clients"): stock middleware configured from GET /api/v1/agents/x402, the agent key as Bearer. */
const startSeller = (agentKey: string, routes: Record<string, SellerRoute>) => startServiceSeller(t, agentKey, routes);

beforeAll(async () => {
  const { solana } = t.stack.rails;
  network = solana.network as `${string}:${string}`;
  payTo = solana.hotWallet.publicKey;
  seller = await t.enabledAgent();
  const started = await startSeller(seller.key, { '/weather': { price: PRICE } });
  sellerUrl = started.url;
  closeSeller = started.close;
  const signer = await createKeyPairSignerFromBytes(bs58.decode(solana.demoPayer.secretKey));
  buyer = new x402Client().register('solana:*', new ExactSvmClient(signer, { rpcUrl: solana.url }));
});
afterAll(async () => {
  await closeSeller?.();
});
afterEach(async () => {
  await expectLedgerBalanced();
});

const usdcBalance = async (key: string) =>
  (await t.call<{ balances: { USDC: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': key } })).body.balances.USDC;

/** A fresh, signed payment for the seller's route, as the stock buyer makes it (not sent). */
async function freshPayment(url = `${sellerUrl}/weather`, sellerId?: string): Promise<PaymentPayload> {
  // The local chain makes a block (a new blockhash) only when a transaction lands (docs/rails.md), so two
  // payments of one price by one payer (and seller memo) signed with nothing landed between are one: move it on.
  t.stack.rails.solana.expireBlockhash();
  const res = await fetch(url);
  expect(res.status).toBe(402);
  const required = JSON.parse(Buffer.from(res.headers.get('payment-required') ?? '', 'base64').toString('utf8')) as PaymentRequired;
  // For another agent than the seller's (as its own middleware would ask): its seller memo.
  const accepts = sellerId ? required.accepts.map((a) => ({ ...a, extra: { ...a.extra, memo: `x402:${sellerId}` } })) : required.accepts;
  return buyer.createPaymentPayload({ ...required, accepts });
}

const settle = (key: string | undefined, payload: PaymentPayload, requirements = payload.accepted) =>
  t.call<Record<string, unknown>>('POST', '/x402/settle', {
    headers: key ? { authorization: `Bearer ${key}` } : {},
    body: { x402Version: 2, paymentPayload: payload, paymentRequirements: requirements },
  });
const verify = (key: string | undefined, payload: PaymentPayload, requirements = payload.accepted) =>
  t.call<Record<string, unknown>>('POST', '/x402/verify', {
    headers: key ? { 'x-agent-key': key } : {},
    body: { x402Version: 2, paymentPayload: payload, paymentRequirements: requirements },
  });

describe('x402 with the stock seller and buyer', () => {
  it('answers 402 with PAYMENT-REQUIRED naming the treasury, the devnet USDC mint and the fee payer', async () => {
    const res = await fetch(`${sellerUrl}/weather`);
    expect(res.status).toBe(402);
    const required = JSON.parse(Buffer.from(res.headers.get('payment-required') ?? '', 'base64').toString('utf8')) as PaymentRequired;
    expect(required.accepts[0]).toMatchObject({
      scheme: 'exact',
      network,
      asset: t.stack.rails.solana.mint,
      amount: '10000',
      payTo,
      extra: { feePayer: t.stack.rails.solana.hotWallet.publicKey, memo: `x402:${seller.id}` },
    });
  });

  it('pays, answers 200 with PAYMENT-RESPONSE, credits the agent once, lists the payment; a replay credits nothing', async () => {
    const treasuryBefore = t.stack.rails.solana.tokenBalance(payTo);
    const before = await usdcBalance(seller.key);
    const paidFetch = wrapFetchWithPayment(fetch, buyer);
    const res = await paidFetch(`${sellerUrl}/weather`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ forecast: 'sunny' });
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response') ?? '');
    expect(receipt).toMatchObject({ success: true, network, payer: t.stack.rails.solana.demoPayer.publicKey });
    expect(receipt.transaction).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    expect(t.stack.rails.solana.tokenBalance(payTo) - treasuryBefore).toBe(10_000n);
    expect(await usdcBalance(seller.key)).toBeCloseTo(before + 0.01, 6);

    const list = await t.call<{ data: Record<string, unknown>[]; nextCursor: string | null }>('GET', '/api/v1/agents/x402/payments', {
      headers: { 'x-agent-key': seller.key },
    });
    expect(list.status).toBe(200);
    expect(list.body.data[0]).toMatchObject({
      amount: 0.01,
      currency: 'USDC',
      payer: t.stack.rails.solana.demoPayer.publicKey,
      transaction: receipt.transaction,
      network,
      resource: `${sellerUrl}/weather`,
    });
  });

  it('answers the first SettleResponse to the same agent and credits nothing; another agent gets success:false', async () => {
    const payload = await freshPayment();
    const first = await settle(seller.key, payload);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ success: true, network });
    const balance = await usdcBalance(seller.key);

    const again = await settle(seller.key, payload);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await usdcBalance(seller.key)).toBe(balance);

    // Another agent: with the seller's requirements its memo is not the seller's; with its own, the payment is the seller's.
    const other = await t.enabledAgent();
    const stolen = await settle(other.key, payload);
    expect(stolen.status).toBe(200);
    expect(stolen.body).toMatchObject({ success: false, errorReason: 'invalid_seller_memo', transaction: '', network });
    const ownMemo = await settle(other.key, payload, {
      ...payload.accepted,
      extra: { ...payload.accepted.extra, memo: `x402:${other.id}` },
    });
    expect(ownMemo.body).toMatchObject({ success: false, errorReason: 'duplicate_settlement', transaction: '', network });
    expect(await usdcBalance(other.key)).toBe(0);
    expect(await usdcBalance(seller.key)).toBe(balance);
  });

  it.each([
    [
      'a payTo other than the treasury',
      { payTo: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM' },
      'invalid_exact_svm_payload_recipient_mismatch',
    ],
    [
      'an asset other than the USDC mint',
      { asset: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB' },
      'invalid_exact_svm_payload_mint_mismatch',
    ],
    ['an amount under X402_MIN_AMOUNT', { amount: '9999' }, 'invalid_exact_svm_payload_amount_below_minimum'],
  ])('refuses %s (verify isValid:false, settle success:false) and credits nothing', async (_what, change, reason) => {
    const payload = await freshPayment();
    const requirements = { ...payload.accepted, ...change };
    const before = await usdcBalance(seller.key);
    const v = await verify(seller.key, payload, requirements);
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ isValid: false, invalidReason: reason });
    const s = await settle(seller.key, payload, requirements);
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ success: false, errorReason: reason, transaction: '', network: requirements.network });
    expect(await usdcBalance(seller.key)).toBe(before);
  });

  it('refuses unauthenticated verify and settle with 401; supported needs no key', async () => {
    const payload = await freshPayment();
    for (const res of [await verify(undefined, payload), await settle(undefined, payload)]) {
      expect([res.status, res.body]).toEqual([401, { error: 'missing x-agent-key header' }]);
    }
    const unknown = await settle('ag_live_notakey', payload);
    expect([unknown.status, unknown.body]).toEqual([401, { error: 'invalid or disabled agent key' }]);
    const supported = await t.call('GET', '/x402/supported', { headers: { authorization: 'Bearer anything' } });
    expect(supported.status).toBe(200);
    expect(supported.body).toEqual({
      kinds: [{ x402Version: 2, scheme: 'exact', network, extra: { feePayer: t.stack.rails.solana.hotWallet.publicKey } }],
      extensions: ['payment-identifier'],
      signers: { 'solana:*': [t.stack.rails.solana.hotWallet.publicKey] },
    });
    const settings = await t.call('GET', '/api/v1/agents/x402', { headers: { 'x-agent-key': seller.key } });
    expect(settings.body).toEqual({
      facilitatorUrl: `${t.stack.url}/x402`,
      network,
      asset: t.stack.rails.solana.mint,
      payTo,
      feePayer: t.stack.rails.solana.hotWallet.publicKey,
      extra: { memo: `x402:${seller.id}` },
    });
  });

  it('credits once when the same payment is settled concurrently', async () => {
    const payload = await freshPayment();
    const before = await usdcBalance(seller.key);
    const answers = await Promise.all(Array.from({ length: 4 }, () => settle(seller.key, payload)));
    for (const a of answers) expect([200, 409]).toContain(a.status);
    expect(answers.some((a) => a.body.success === true)).toBe(true);
    // A racer is told it was paid, to ask again, or that the request is in progress: never that it failed.
    for (const a of answers.filter((answer) => answer.status === 200 && answer.body.success !== true)) {
      expect(a.body).toMatchObject({ success: false, errorReason: 'settlement_pending' });
    }
    // Whatever each racer was told, the chain has the transfer once and the agent is credited once.
    const final = await settle(seller.key, payload);
    expect(final.body).toMatchObject({ success: true });
    expect(await usdcBalance(seller.key)).toBeCloseTo(before + 0.01, 6);
  });
});

describe('x402 when the process dies between the on-chain confirmation and the credit', () => {
  /** The settle whose process dies: its 500 is the injected crash, not a contract answer (plain fetch). */
  const settleThatDies = async (payload: PaymentPayload) =>
    (
      await fetch(`${t.stack.url}/x402/settle`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-agent-key': seller.key },
        body: JSON.stringify({ x402Version: 2, paymentPayload: payload, paymentRequirements: payload.accepted }),
      })
    ).status;

  const creditCommit = (input: Record<string, unknown>) =>
    ((input.TransactItems as { Update?: { Key?: { PK?: unknown } } }[] | undefined) ?? []).some((i) =>
      String(i.Update?.Key?.PK ?? '').startsWith('X402TX#'),
    );

  /** Settle sends the transfer, it confirms, and the process dies at the credit's commit (once). */
  const settleDiesBeforeTheCredit = async (payload: PaymentPayload) => {
    const fault = inject({ command: 'TransactWriteItemsCommand', match: creditCommit, times: 1, error: crash });
    try {
      expect(await settleThatDies(payload)).toBe(500);
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBe(1);
  };

  it('a retry of the same settle finds the confirmed transaction and credits it once', async () => {
    const payload = await freshPayment();
    const before = await usdcBalance(seller.key);
    const treasuryBefore = t.stack.rails.solana.tokenBalance(payTo);
    await settleDiesBeforeTheCredit(payload);
    expect(t.stack.rails.solana.tokenBalance(payTo) - treasuryBefore).toBe(10_000n);
    expect(await usdcBalance(seller.key)).toBe(before);

    const retry = await settle(seller.key, payload);
    expect(retry.body).toMatchObject({ success: true, network });
    expect(await usdcBalance(seller.key)).toBeCloseTo(before + 0.01, 6);
    expect((await settle(seller.key, payload)).body).toEqual(retry.body);
    expect(await usdcBalance(seller.key)).toBeCloseTo(before + 0.01, 6);
  });

  it('the reconciler finds it when nobody retries, and credits it once', async () => {
    const payload = await freshPayment();
    const before = await usdcBalance(seller.key);
    await settleDiesBeforeTheCredit(payload);
    // The reconciler as deployed: its payout sweep, then x402 with the read-only facilitator (it never signs).
    const later = new Date(Date.now() + 3_600_000);
    const reconciler = createReconciler({ railFor, clock: () => later, x402Facilitator: readOnlyFacilitator });
    expect((await reconciler())?.x402).toMatchObject({ credited: 1, failed: 0, stillPending: 0 });
    expect((await reconciler())?.x402).toMatchObject({ credited: 0, failed: 0, stillPending: 0 });
    expect(await usdcBalance(seller.key)).toBeCloseTo(before + 0.01, 6);
    // The seller's retry afterwards answers the credited settlement and credits nothing more.
    expect((await settle(seller.key, payload)).body).toMatchObject({ success: true });
    expect(await usdcBalance(seller.key)).toBeCloseTo(before + 0.01, 6);
  });
  it('a settlement the reconciler leaves PENDING goes to the back of its list: it never starves a newer one', async () => {
    const facilitator = await readOnlyFacilitator();
    const later = new Date(Date.now() + 3_600_000);
    // Whatever earlier tests left PENDING is looked at (and moved back) first, so the runs below see only this test's.
    await reconcileX402(facilitator, later);
    // The oldest claim of all, whose transaction was never sent: not seen on chain, it stays PENDING.
    const unsent = randomBytes(32).toString('hex');
    await claimSettlement(
      {
        messageHash: unsent,
        signature: bs58.encode(randomBytes(64)),
        agentId: seller.id,
        amount: 10_000,
        payer: bs58.encode(randomBytes(32)),
        network,
        resource: null,
      },
      new Date('2026-01-01T00:00:00Z'),
    );
    // A newer one whose settle died after the transfer confirmed.
    const payload = await freshPayment();
    const before = await usdcBalance(seller.key);
    await settleDiesBeforeTheCredit(payload);
    // One settlement a run: the unsent claim first, then (it moved to the back) the confirmed one.
    expect(await reconcileX402(facilitator, later, { limit: 1 })).toEqual({ credited: 0, heldAtLimit: 0, failed: 0, stillPending: 1 });
    expect(await reconcileX402(facilitator, later, { limit: 1 })).toEqual({ credited: 1, heldAtLimit: 0, failed: 0, stillPending: 0 });
    expect(await usdcBalance(seller.key)).toBeCloseTo(before + 0.01, 6);
    // Once stale again, the unsent claim is looked at again, and stays PENDING.
    const again = new Date(later.getTime() + (config().X402_RECONCILE_AFTER_SECONDS + 1) * 1000);
    expect(await reconcileX402(facilitator, again, { limit: 1 })).toEqual({ credited: 0, heldAtLimit: 0, failed: 0, stillPending: 1 });
    const unsentItem = (await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.x402Settlement(unsent) }))).Item;
    expect(unsentItem).toMatchObject({ status: 'PENDING', reconciledAt: again.toISOString() });
    // Off the reconciler's list for the next tests (a claim is never given up: only the chain ends one).
    await db().send(new DeleteCommand({ TableName: config().TABLE_NAME, Key: keys.x402Settlement(unsent) }));
  });
});

/** The settlement of a payment: keyed by its transaction's message hash, as verify finds it without a key. */
describe('x402 credit that loses to a credit made before', () => {
  it("answers the settlement's recorded success, found by its message hash, and credits nothing", async () => {
    const payload = await freshPayment();
    const first = await settle(seller.key, payload);
    expect(first.body).toMatchObject({ success: true });
    const balance = await usdcBalance(seller.key);
    const item = await settlementItem(payload);
    // As if its idempotency record had expired: the credit's condition on the claim speaks alone.
    await db().send(
      new DeleteCommand({ TableName: config().TABLE_NAME, Key: keys.idempotency(`${seller.id}#x402-settle`, String(item.signature)) }),
    );
    const again = await creditConfirmed({ ...toSettlement(item), status: 'PENDING' }, { ...(first.body as SettleResponse) });
    expect(again.outcome).toBe('alreadyCredited');
    expect(JSON.parse(again.result instanceof StoredReply ? again.result.rawBody : '{}')).toEqual(first.body);
    expect(await usdcBalance(seller.key)).toBe(balance);
  });
});

const settlementItem = async (payload: PaymentPayload) => {
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(String(payload.payload.transaction)));
  const messageHash = createHash('sha256').update(Buffer.from(transaction.messageBytes)).digest('hex');
  return (await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.x402Settlement(messageHash) }))).Item ?? {};
};

describe('x402 finality: credited at confirmed, checked again at finalized by the reconciler', () => {
  it('takes every finalized settlement off its list once; one the chain no longer knows is a mismatch, logged once', async () => {
    const later = new Date(Date.now() + 3_600_000);
    const facilitator = await readOnlyFacilitator();
    // Every settlement credited so far landed on the local chain, which finalizes at once (the
    // reconciler's run above has checked them already).
    expect(await checkX402Finality(facilitator, later)).toMatchObject({ mismatched: 0, waiting: 0 });
    const first = await freshPayment();
    const finalized = await settle(seller.key, first);
    expect(await settlementItem(first)).toMatchObject({ signature: finalized.body.transaction, GSI1PK: 'X402UNFINAL' });
    expect(await checkX402Finality(facilitator, later)).toEqual({ finalized: 1, mismatched: 0, waiting: 0 });
    expect(await checkX402Finality(facilitator, later)).toEqual({ finalized: 0, mismatched: 0, waiting: 0 });
    expect(await settlementItem(first)).toMatchObject({ finalizedAt: later.toISOString() });

    const payload = await freshPayment();
    const paid = await settle(seller.key, payload);
    expect(paid.body).toMatchObject({ success: true });
    const signature = String(paid.body.transaction);
    expect(await settlementItem(payload)).toMatchObject({ signature, status: 'CREDITED', GSI1PK: 'X402UNFINAL' });
    // Too young to check: left alone.
    expect(await checkX402Finality(facilitator, new Date())).toEqual({ finalized: 0, mismatched: 0, waiting: 0 });
    // A chain that has dropped the fork it was confirmed on no longer knows the signature.
    const forgetful = { ...facilitator, chainStatus: async () => ({ kind: 'unknown' as const }) };
    const soon = new Date(Date.now() + 120_000);
    expect(await checkX402Finality(forgetful, soon)).toEqual({ finalized: 0, mismatched: 0, waiting: 1 });
    expect(await checkX402Finality(forgetful, later)).toEqual({ finalized: 0, mismatched: 1, waiting: 0 });
    expect(await checkX402Finality(forgetful, later)).toEqual({ finalized: 0, mismatched: 0, waiting: 0 });
    const item = await settlementItem(payload);
    expect(item).toMatchObject({ status: 'CREDITED', finalityMismatch: expect.stringContaining('not finalized') });
    expect(item.GSI1PK).toBeUndefined();
  });
});

describe("x402 when the agent's USDC balance is at its cap", () => {
  /**
   * Adds `delta` to every USDC shard of the agent, outside any ledger movement: the stand-in for an
   * agent that has earned up to MAX_BALANCE_MINOR on each shard (no test can earn 2^46 units), taken
   * back out (its withdrawal) before the test ends, so the audit after it holds.
   */
  const moveShards = (agentId: string, delta: number) =>
    Promise.all(
      Array.from({ length: config().BALANCE_SHARDS }, (_, shard) =>
        db().send(
          new UpdateCommand({
            TableName: config().TABLE_NAME,
            Key: keys.agentBalanceShard(agentId, shard),
            UpdateExpression: 'ADD USDC :delta',
            ExpressionAttributeValues: { ':delta': delta },
          }),
        ),
      ),
    );
  const heldLines = (lines: { message: string; attributes: Record<string, unknown> }[]) =>
    lines.filter((l) => l.message === X402_BALANCE_LIMIT_LOG_MESSAGE);

  it('holds the confirmed payment PENDING and logs the alarmed line on settle and every reconciler run; credits it once when the cap has room', async () => {
    const agent = await t.enabledAgent();
    await moveShards(agent.id, MAX_BALANCE_MINOR);
    const payload = await freshPayment(undefined, agent.id);
    const treasuryBefore = t.stack.rails.solana.tokenBalance(payTo);

    let settled: Awaited<ReturnType<typeof settle>> | undefined;
    const atSettle = await errorLines(async () => {
      settled = await settle(agent.key, payload);
    });
    // The answer as before the outcome was counted, byte for byte.
    expect(settled?.status).toBe(200);
    expect(settled?.text).toBe(
      JSON.stringify({
        success: false,
        errorReason: 'settlement_pending',
        errorMessage: 'balance limit reached; the credit is retried',
        payer: '',
        transaction: '',
        network,
      }),
    );
    // The USDC is in the treasury, owed to the agent: the line the X402CreditHeldAtLimit filter matches names it.
    expect(t.stack.rails.solana.tokenBalance(payTo) - treasuryBefore).toBe(10_000n);
    expect(heldLines(atSettle)).toEqual([
      {
        message: 'x402 credit refused: balance limit',
        attributes: { signature: expect.any(String), messageHash: expect.any(String), agentId: agent.id, amount: '0.01' },
      },
    ]);
    const signature = String(heldLines(atSettle)[0]?.attributes.signature);
    const messageHash = String(heldLines(atSettle)[0]?.attributes.messageHash);
    expect(await settlementItem(payload)).toMatchObject({ PK: `X402TX#${messageHash}`, signature });
    expect(await settlementItem(payload)).toMatchObject({ signature, status: 'PENDING', agentId: agent.id });
    // The seller's retry is held the same way.
    expect((await settle(agent.key, payload)).text).toBe(settled?.text);

    // Every reconciler run tries the credit again: held, not credited, and logged each time.
    // Runs a reconciler interval apart: a held settlement is taken again once it is stale again.
    let later = new Date(Date.now() + 3_600_000);
    const reconciler = createReconciler({ railFor, clock: () => later, x402Facilitator: readOnlyFacilitator });
    const nextRun = () => {
      later = new Date(later.getTime() + (config().X402_RECONCILE_AFTER_SECONDS + 1) * 1000);
    };
    for (let run = 0; run < 2; run++, nextRun()) {
      let report: Awaited<ReturnType<typeof reconciler>> | undefined;
      const lines = await errorLines(async () => {
        report = await reconciler();
      });
      expect(report?.x402).toMatchObject({ credited: 0, heldAtLimit: 1, failed: 0, stillPending: 0 });
      expect(heldLines(lines).map((l) => l.attributes)).toEqual([{ signature, messageHash, agentId: agent.id, amount: '0.01' }]);
    }
    expect(await settlementItem(payload)).toMatchObject({ status: 'PENDING' });

    // The agent withdraws (the padding taken back out): the next run credits it, once.
    await moveShards(agent.id, -MAX_BALANCE_MINOR);
    let report: Awaited<ReturnType<typeof reconciler>> | undefined;
    const lines = await errorLines(async () => {
      report = await reconciler();
    });
    expect(report?.x402).toMatchObject({ credited: 1, heldAtLimit: 0, failed: 0, stillPending: 0 });
    expect(heldLines(lines)).toEqual([]);
    expect((await reconciler())?.x402).toMatchObject({ credited: 0, heldAtLimit: 0, failed: 0, stillPending: 0 });
    expect(await settlementItem(payload)).toMatchObject({ status: 'CREDITED' });
    expect(await usdcBalance(agent.key)).toBeCloseTo(0.01, 6);
    // The seller asking again gets the success the reconciler recorded, and nothing more is credited.
    expect((await settle(agent.key, payload)).body).toEqual({ success: true, transaction: signature, network, payer: expect.any(String) });
    expect(await usdcBalance(agent.key)).toBeCloseTo(0.01, 6);
    const list = await t.call<{ data: { transaction: string }[] }>('GET', '/api/v1/agents/x402/payments', {
      headers: { 'x-agent-key': agent.key },
    });
    expect(list.body.data.map((p) => p.transaction)).toEqual([signature]);
  });
});
