/**
 * What the x402 purchase tests share (DESIGN §22, docs/x402.md "Buying from x402 sellers"): the test
 * stack's hot wallet funded with USDC (what purchases are paid from), a stock `@x402/express` seller
 * settling through the stock `@x402/svm` facilitator on the stack's chain, and the moves every such
 * test makes in its own words: the seller's requirements, a payer with a USDC grant for an enabled
 * agent, the purchase, its read, the payment sent to the seller as the stock client sends it.
 * Nothing here asserts what a test proves: each helper checks only that its set-up step worked.
 * The README's buyer (stock `@x402/fetch`) is `serviceBuyer` in test/x402/stock-seller.ts. The
 * other way round, the service as its agents' facilitator: `useFacilitatorFixture`.
 *
 * Call `usePurchaseFixture` after the stack's own hooks are declared (useTestStack, or a
 * `beforeAll` starting the stack): its `beforeAll` runs after theirs.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { Keypair, type TransactionInstruction } from '@solana/web3.js';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { PaymentRequirements } from '@x402/core/types';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import { ExactSvmScheme as ExactSvmServer } from '@x402/svm/exact/server';
import bs58 from 'bs58';
// @ts-expect-error express ships no types and @types/express is not installed; the seller here is a few lines.
import express from 'express';
import { exactTransaction, latestBlockhash, payloadOf, requirementsFor } from '../x402/attacker';
import { type StockSeller, startStockSeller } from '../x402/stock-seller';
import type { Reply } from './http';
import type { TestStack } from './stack';

/** An enabled agent, its payer funded with USDC, and the payer's USDC grant for the agent. */
export interface Buyer {
  agent: { id: string; key: string };
  user: { id: string; key: string };
  grant: { id: string; key: string };
}

export interface PurchaseFixture {
  /** The stock seller (started in the fixture's `beforeAll`). */
  readonly seller: StockSeller;
  /** `seller.url` + `/weather`: the one resource it sells. */
  readonly resource: string;
  /**
   * The seller's current requirements for its resource (`accepts[0]` of its 402), on a fresh
   * blockhash: the local chain makes one only when a transaction lands, and two payments built alike
   * in one block would be one message.
   */
  requirements(): Promise<Record<string, unknown>>;
  /** A payer funded with `usdc` (1 unless given) and a USDC grant of `grant` (limits `{ total: 5 }` unless given) for a new enabled agent. */
  buyer(opts?: { usdc?: number; grant?: Record<string, unknown> }): Promise<Buyer>;
  /** POST /api/v1/agents/x402/purchases as the buyer's agent with its grant key (a new Idempotency-Key unless given). */
  buy<T = unknown>(
    buyer: Pick<Buyer, 'agent' | 'grant'>,
    paymentRequirements: unknown,
    opts?: { idempotencyKey?: string; body?: Record<string, unknown> },
  ): Promise<Reply<T>>;
  /** GET /api/v1/agents/x402/purchases/{id} with the agent key. */
  read<T = unknown>(agentKey: string, id: string): Promise<Reply<T>>;
  /** Sends a purchase's payment to the seller as the stock client retries: PAYMENT-SIGNATURE with the accepted requirements. */
  pay(paymentPayload: unknown, accepted: Record<string, unknown>): Promise<Response>;
  /** A payer's USDC balance, as the operator reads it. */
  usdcBalance(userId: string): Promise<number>;
}

/**
 * The fixture on the stack `t` (useTestStack's, or a getter of a stack a `beforeAll` starts): funds
 * the hot wallet with `hotWalletUsdc` atomic units (10 USDC unless given) and starts a seller at
 * `price` ($0.01 unless given), closed after all.
 */
export function usePurchaseFixture(
  t: TestStack | (() => TestStack),
  opts: { hotWalletUsdc?: bigint; price?: string } = {},
): PurchaseFixture {
  const stack = typeof t === 'function' ? t : () => t;
  let started: StockSeller | undefined;
  beforeAll(async () => {
    const { solana } = stack().stack.rails;
    solana.mintTo(solana.hotWallet.publicKey, opts.hotWalletUsdc ?? 10_000_000n);
    started = await startStockSeller(solana, opts.price ?? '$0.01');
  });
  afterAll(async () => started?.close());
  const seller = (): StockSeller => {
    if (!started) throw new Error('the purchase fixture is read before its beforeAll started the seller');
    return started;
  };
  const call = <T>(...args: Parameters<TestStack['call']>) => stack().call<T>(...args);
  return {
    get seller() {
      return seller();
    },
    get resource() {
      return `${seller().url}/weather`;
    },
    async requirements() {
      stack().stack.rails.solana.advanceBlocks(1);
      const res = await fetch(`${seller().url}/weather`);
      expect(res.status).toBe(402);
      const required = JSON.parse(Buffer.from(res.headers.get('payment-required') ?? '', 'base64').toString('utf8')) as {
        accepts: Record<string, unknown>[];
      };
      return required.accepts[0] as Record<string, unknown>;
    },
    async buyer({ usdc = 1, grant = { limits: { total: 5 } } } = {}) {
      const agent = await stack().enabledAgent();
      const user = await stack().fundedUser({ USDC: usdc });
      const made = await call<{ id: string; key: string }>('POST', '/api/v1/users/me/grants', {
        headers: { 'x-user-key': user.key },
        body: { agentId: agent.id, currency: 'USDC', ...grant },
      });
      expect(made.status).toBe(201);
      return { agent, user, grant: { id: made.body.id, key: made.body.key } };
    },
    buy<T>(
      buyer: Pick<Buyer, 'agent' | 'grant'>,
      paymentRequirements: unknown,
      o: { idempotencyKey?: string; body?: Record<string, unknown> } = {},
    ) {
      return call<T>('POST', '/api/v1/agents/x402/purchases', {
        headers: { 'x-agent-key': buyer.agent.key, 'x-user-key': buyer.grant.key, 'idempotency-key': o.idempotencyKey ?? randomUUID() },
        body: { x402Version: 2, paymentRequirements, ...o.body },
      });
    },
    read<T>(agentKey: string, id: string) {
      return call<T>('GET', `/api/v1/agents/x402/purchases/${id}`, { headers: { 'x-agent-key': agentKey } });
    },
    pay(paymentPayload, accepted) {
      const resource = `${seller().url}/weather`;
      const header = Buffer.from(JSON.stringify({ ...(paymentPayload as object), resource: { url: resource }, accepted })).toString(
        'base64',
      );
      return fetch(resource, { headers: { 'payment-signature': header } });
    },
    async usdcBalance(userId) {
      const res = await call<{ balances: { USDC: number } }>('GET', `/api/v1/admin/users/${userId}`, { headers: stack().admin });
      return res.body.balances.USDC;
    },
  };
}

/** A seller agent of the service's facilitator: its key and id, and the memo its middleware puts in `extra.memo`. */
export interface FacilitatorSeller {
  key: string;
  id: string;
  memo: string | undefined;
}

export interface FacilitatorFixture {
  /** The service's x402 treasury: the hot wallet, which is also the fee payer. */
  readonly treasury: string;
  /** A new enabled agent and its seller memo (`GET /api/v1/agents/x402`). */
  seller(): Promise<FacilitatorSeller>;
  /** 0.01 USDC to the treasury with the seller's `memo`, as its middleware would ask. */
  requirements(memo: string | undefined): PaymentRequirements;
  /** The payment the stock `@x402/svm` client (the chain's demo payer) makes for `accepted`, on a fresh blockhash. */
  payment(accepted: PaymentRequirements): Promise<ReturnType<typeof payloadOf>>;
  /**
   * A payment built by hand, as an attacker builds it (test/x402/attacker.ts `exactTransaction`): `amount`
   * (10,000 micro-USDC unless given) from `from` (the chain's demo payer unless given) to the treasury
   * with the seller's `memo`, the compute budget given (the stock client's 20,000 units at 1 µlamport
   * unless given) and `extra` instructions after the memo; on a fresh blockhash unless `sameBlockhash`.
   */
  craftedPayment(opts: {
    memo: string | undefined;
    amount?: bigint;
    from?: Keypair;
    computeUnits?: number;
    microLamports?: number;
    extra?: TransactionInstruction[];
    sameBlockhash?: boolean;
  }): Promise<ReturnType<typeof payloadOf>>;
  /** `/x402/verify` or `/x402/settle` as `who`: its key as `x-agent-key`, or `Authorization: Bearer` (the stock middleware's). */
  ask(
    path: '/x402/verify' | '/x402/settle',
    who: Pick<FacilitatorSeller, 'key'>,
    payload: unknown,
    required: unknown,
    auth?: 'x-agent-key' | 'bearer',
  ): Promise<Reply<Record<string, unknown>>>;
  /** The agent's USDC balance, as it reads it. */
  usdcBalance(who: Pick<FacilitatorSeller, 'key'>): Promise<number>;
}

/**
 * The service as the facilitator of its agents' x402 sales (DESIGN §22), on the stack `t`: seller
 * agents, their requirements, and payments the stock client makes from the chain's demo payer.
 */
export function useFacilitatorFixture(t: TestStack): FacilitatorFixture {
  let buyer: ExactSvmClient | undefined;
  beforeAll(async () => {
    const { solana } = t.stack.rails;
    buyer = new ExactSvmClient(await createKeyPairSignerFromBytes(bs58.decode(solana.demoPayer.secretKey)), { rpcUrl: solana.url });
  });
  const treasury = () => t.stack.rails.solana.hotWallet.publicKey;
  return {
    get treasury() {
      return treasury();
    },
    async seller() {
      const agent = await t.enabledAgent();
      const settings = await t.call<{ extra?: { memo?: string } }>('GET', '/api/v1/agents/x402', { headers: { 'x-agent-key': agent.key } });
      return { ...agent, memo: settings.body.extra?.memo };
    },
    requirements(memo) {
      const { solana } = t.stack.rails;
      return requirementsFor({
        network: solana.network,
        mint: solana.mint,
        treasury: treasury(),
        feePayer: treasury(),
        amount: 10_000n,
        memo,
      });
    },
    async payment(accepted) {
      if (!buyer) throw new Error('the facilitator fixture is read before its beforeAll made the buyer');
      t.stack.rails.solana.expireBlockhash();
      const created = await buyer.createPaymentPayload(2, accepted);
      return payloadOf(String(created.payload.transaction), accepted);
    },
    async craftedPayment({ memo, amount = 10_000n, from, computeUnits = 20_000, microLamports = 1, extra, sameBlockhash = false }) {
      const { solana } = t.stack.rails;
      const signer = from ?? Keypair.fromSecretKey(bs58.decode(solana.demoPayer.secretKey));
      // The local chain makes a blockhash only when a transaction lands: moving it on expires every payment made before.
      if (!sameBlockhash) solana.expireBlockhash();
      const { base64 } = exactTransaction({
        feePayer: treasury(),
        from: signer.publicKey.toBase58(),
        to: treasury(),
        mint: solana.mint,
        amount,
        computeUnits,
        microLamports,
        memo,
        ...(extra ? { extra } : {}),
        blockhash: await latestBlockhash(solana.url),
        signers: [signer],
      });
      return payloadOf(
        base64,
        requirementsFor({ network: solana.network, mint: solana.mint, treasury: treasury(), feePayer: treasury(), amount, memo }),
      );
    },
    ask(path, who, payload, required, auth = 'x-agent-key') {
      return t.call<Record<string, unknown>>('POST', path, {
        headers: auth === 'bearer' ? { authorization: `Bearer ${who.key}` } : { 'x-agent-key': who.key },
        body: { x402Version: 2, paymentPayload: payload, paymentRequirements: required },
      });
    },
    async usdcBalance(who) {
      const res = await t.call<{ balances: { USDC: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': who.key } });
      return res.body.balances.USDC;
    },
  };
}

/** A route of `startServiceSeller`: its price (`$0.01` style), and the payTo and extensions it declares when not the defaults. */
export interface SellerRoute {
  price: string;
  /** The agent's x402 settings' payTo unless given. */
  payTo?: string;
  extensions?: Record<string, unknown>;
}

/**
 * docs/examples/seller.mjs (docs/x402.md), on a free port: stock `@x402/express` whose facilitator is the
 * service, reached with the seller agent's key as the stock `createAuthHeaders` sends it (Bearer),
 * and the settings `GET /api/v1/agents/x402` gives (network, payTo, extra.memo). Each route answers
 * `{ forecast: 'sunny' }` once paid.
 */
export async function startServiceSeller(
  t: TestStack,
  agentKey: string,
  routes: Record<string, SellerRoute>,
): Promise<{ url: string; close: () => Promise<void> }> {
  const settings = (
    await t.call<{ facilitatorUrl: string; network: `${string}:${string}`; payTo: string; extra: { memo: string } }>(
      'GET',
      '/api/v1/agents/x402',
      { headers: { 'x-agent-key': agentKey } },
    )
  ).body;
  const auth = { Authorization: `Bearer ${agentKey}` };
  const facilitator = new HTTPFacilitatorClient({
    url: settings.facilitatorUrl,
    createAuthHeaders: async () => ({ verify: auth, settle: auth, supported: auth }),
  });
  const server = new x402ResourceServer(facilitator).register(settings.network, new ExactSvmServer());
  const app = express();
  const config = Object.fromEntries(
    Object.entries(routes).map(([route, r]) => [
      `GET ${route}`,
      {
        accepts: { scheme: 'exact', price: r.price, network: settings.network, payTo: r.payTo ?? settings.payTo, extra: settings.extra },
        description: 'a forecast',
        ...(r.extensions ? { extensions: r.extensions } : {}),
      },
    ]),
  );
  app.use(paymentMiddleware(config, server));
  for (const route of Object.keys(routes))
    app.get(route, (_req: unknown, res: { json(body: unknown): void }) => res.json({ forecast: 'sunny' }));
  return new Promise((resolve) => {
    const listener = app.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}`,
        close: () => new Promise((done) => listener.close(() => done())),
      });
    });
  });
}
