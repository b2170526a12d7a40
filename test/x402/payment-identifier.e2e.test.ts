/**
 * The `payment-identifier` extension on the facilitator (DESIGN §22, issue 32, docs/x402.md "Payment
 * identifiers"), with the stock packages: a seller whose `@x402/express` route declares the
 * extension (`declarePaymentIdentifierExtension` from `@x402/extensions`), a buyer whose stock
 * `@x402/fetch` client appends an identifier (`appendPaymentIdentifierToExtensions`). The same
 * identifier with the same payment answers the first result, to verify and to settle; another payment
 * with it is a 409 and credits nothing; identifiers are the agent's own; a payment without one is
 * what it always was.
 */
import { createKeyPairSignerFromBytes } from '@solana/kit';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import {
  appendPaymentIdentifierToExtensions,
  declarePaymentIdentifierExtension,
  extractPaymentIdentifier,
  PAYMENT_IDENTIFIER,
} from '@x402/extensions/payment-identifier';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import bs58 from 'bs58';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { startServiceSeller } from '../support/x402';

const t = useTestStack();
let seller: { key: string; id: string };
let sellerUrl: string;
let closeSeller: () => Promise<void>;
let buyer: x402Client;
let treasury: string;

/** The README's seller, its route declaring the payment-identifier extension. */
const startSeller = (agentKey: string) =>
  startServiceSeller(t, agentKey, {
    '/weather': { price: '$0.01', extensions: { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension() } },
  });

beforeAll(async () => {
  const { solana } = t.stack.rails;
  treasury = solana.hotWallet.publicKey;
  seller = await t.enabledAgent();
  ({ url: sellerUrl, close: closeSeller } = await startSeller(seller.key));
  const signer = await createKeyPairSignerFromBytes(bs58.decode(solana.demoPayer.secretKey));
  // The stock client echoes the seller's declaration; this client extension fills in the id.
  buyer = new x402Client().register('solana:*', new ExactSvmClient(signer, { rpcUrl: solana.url })).registerExtension({
    key: PAYMENT_IDENTIFIER,
    enrichPaymentPayload: async (payload) => ({
      ...payload,
      extensions: appendPaymentIdentifierToExtensions(structuredClone(payload.extensions ?? {})),
    }),
  });
});
afterAll(async () => {
  await closeSeller?.();
});
afterEach(async () => {
  await expectLedgerBalanced();
});

const usdcBalance = async (key: string) =>
  (await t.call<{ balances: { USDC: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': key } })).body.balances.USDC;

/** A fresh payment for the seller's route as the stock buyer makes it, with an identifier (not sent). */
async function freshPayment(): Promise<PaymentPayload> {
  t.stack.rails.solana.expireBlockhash();
  const res = await fetch(`${sellerUrl}/weather`);
  expect(res.status).toBe(402);
  const required = JSON.parse(Buffer.from(res.headers.get('payment-required') ?? '', 'base64').toString('utf8')) as PaymentRequired;
  return buyer.createPaymentPayload(required);
}

const ask = (path: '/x402/verify' | '/x402/settle', key: string, payload: PaymentPayload, requirements = payload.accepted) =>
  t.call<Record<string, unknown>>('POST', path, {
    headers: { authorization: `Bearer ${key}` },
    body: { x402Version: 2, paymentPayload: payload, paymentRequirements: requirements },
  });

const withIdentifier = (payload: PaymentPayload, info: Record<string, unknown>): PaymentPayload => ({
  ...payload,
  extensions: { ...payload.extensions, [PAYMENT_IDENTIFIER]: { info } },
});

describe('payment identifiers on the facilitator', () => {
  it('lists the payment-identifier extension in /x402/supported', async () => {
    const supported = await t.call<{ extensions: string[] }>('GET', '/x402/supported');
    expect(supported.status).toBe(200);
    expect(supported.body.extensions).toEqual([PAYMENT_IDENTIFIER]);
  });

  it("serves the buyer's retry of a paid request (same PAYMENT-SIGNATURE) without a second payment: one transfer, one credit", async () => {
    const signatures: string[] = [];
    const recording: typeof fetch = async (input, init) => {
      const header = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)).get('payment-signature');
      if (header) signatures.push(header);
      return fetch(input, init);
    };
    const treasuryBefore = t.stack.rails.solana.tokenBalance(treasury);
    const before = await usdcBalance(seller.key);

    const paid = await wrapFetchWithPayment(recording, buyer)(`${sellerUrl}/weather`);
    expect(paid.status).toBe(200);
    const receipt = decodePaymentResponseHeader(paid.headers.get('payment-response') ?? '');
    expect(receipt).toMatchObject({ success: true });
    const [signature] = signatures;
    const sent = JSON.parse(Buffer.from(signature ?? '', 'base64').toString('utf8')) as PaymentPayload;
    expect(extractPaymentIdentifier(sent)).toMatch(/^pay_[0-9a-f]{32}$/);

    // The answer was lost, say: the buyer sends the same request with the same payment again.
    const retry = await fetch(`${sellerUrl}/weather`, { headers: { 'payment-signature': signature ?? '' } });
    expect(retry.status).toBe(200);
    expect(await retry.json()).toEqual({ forecast: 'sunny' });
    expect(decodePaymentResponseHeader(retry.headers.get('payment-response') ?? '').transaction).toBe(receipt.transaction);

    expect(t.stack.rails.solana.tokenBalance(treasury) - treasuryBefore).toBe(10_000n);
    expect(await usdcBalance(seller.key)).toBeCloseTo(before + 0.01, 6);
  });

  it('answers the first verify and the first settle again to the same identifier and payment; another payment with it → 409', async () => {
    const payload = await freshPayment();
    const before = await usdcBalance(seller.key);

    const firstVerify = await ask('/x402/verify', seller.key, payload);
    const againVerify = await ask('/x402/verify', seller.key, payload);
    expect(firstVerify.body).toMatchObject({ isValid: true });
    expect(firstVerify.headers.get('idempotent-replayed')).toBeNull();
    expect(againVerify.text).toBe(firstVerify.text);
    expect(againVerify.headers.get('idempotent-replayed')).toBe('true');

    const firstSettle = await ask('/x402/settle', seller.key, payload);
    const againSettle = await ask('/x402/settle', seller.key, payload);
    expect(firstSettle.body).toMatchObject({ success: true });
    expect(againSettle.text).toBe(firstSettle.text);
    expect(againSettle.headers.get('idempotent-replayed')).toBe('true');
    // After the settle, the identifier's first verify answer still (a payment without one: duplicate_settlement).
    expect((await ask('/x402/verify', seller.key, payload)).text).toBe(firstVerify.text);

    const id = extractPaymentIdentifier(payload) ?? '';
    const other = withIdentifier(await freshPayment(), { required: false, id });
    for (const path of ['/x402/verify', '/x402/settle'] as const) {
      const conflict = await ask(path, seller.key, other);
      expect(conflict.status).toBe(409);
      expect(conflict.body).toEqual({ error: 'this payment identifier was used with another payment' });
    }
    expect(await usdcBalance(seller.key)).toBeCloseTo(before + 0.01, 6);
  });

  it("keeps identifiers per agent: another agent's payment with the same identifier is its own", async () => {
    const payload = await freshPayment();
    const id = extractPaymentIdentifier(payload) ?? '';
    expect((await ask('/x402/settle', seller.key, payload)).body).toMatchObject({ success: true });

    const other = await t.enabledAgent();
    const otherMemo = `x402:${other.id}`;
    const required = JSON.parse(
      Buffer.from((await fetch(`${sellerUrl}/weather`)).headers.get('payment-required') ?? '', 'base64').toString('utf8'),
    ) as PaymentRequired;
    t.stack.rails.solana.expireBlockhash();
    const forOther = await buyer.createPaymentPayload({
      ...required,
      accepts: required.accepts.map((a) => ({ ...a, extra: { ...a.extra, memo: otherMemo } })),
    });
    const settled = await ask('/x402/settle', other.key, withIdentifier(forOther, { required: false, id }));
    expect(settled.status).toBe(200);
    expect(settled.body).toMatchObject({ success: true });
    expect(await usdcBalance(other.key)).toBeCloseTo(0.01, 6);
  });

  it.each([
    [
      'too short',
      { required: false, id: 'pay_short' },
      'paymentPayload.extensions.payment-identifier.info.id must be 16-128 characters: letters, digits, "-" and "_"',
    ],
    [
      'with other characters',
      { required: false, id: 'pay_0123456789abcdef!' },
      'paymentPayload.extensions.payment-identifier.info.id must be 16-128 characters: letters, digits, "-" and "_"',
    ],
    [
      'not a string',
      { required: false, id: 1234567890123456 },
      'paymentPayload.extensions.payment-identifier.info.id must be 16-128 characters: letters, digits, "-" and "_"',
    ],
    ['missing where required', { required: true }, 'paymentPayload.extensions.payment-identifier.info.id is required'],
    ['without required', { id: 'pay_0123456789abcdef' }, 'paymentPayload.extensions.payment-identifier.info.required must be a boolean'],
  ])('answers 400 to an identifier %s, and settles nothing', async (_what, info, error) => {
    const payload = withIdentifier(await freshPayment(), info);
    const before = await usdcBalance(seller.key);
    for (const path of ['/x402/verify', '/x402/settle'] as const) {
      const res = await ask(path, seller.key, payload);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error });
    }
    expect(await usdcBalance(seller.key)).toBe(before);
  });

  it('leaves a payment without an identifier as it was: verify after its settle is duplicate_settlement', async () => {
    const fresh = await freshPayment();
    const { [PAYMENT_IDENTIFIER]: _, ...rest } = fresh.extensions ?? {};
    const payload = { ...fresh, extensions: rest };
    expect((await ask('/x402/settle', seller.key, payload)).body).toMatchObject({ success: true });
    expect((await ask('/x402/verify', seller.key, payload)).body).toMatchObject({ isValid: false, invalidReason: 'duplicate_settlement' });
  });
});
