/**
 * What the x402 purchase tests share (DESIGN §22, docs/x402.md "Buying from x402 sellers"): the test
 * stack's hot wallet funded with USDC (what purchases are paid from), a stock `@x402/express` seller
 * settling through the stock `@x402/svm` facilitator on the stack's chain, and the moves every such
 * test makes in its own words: the seller's requirements, a payer with a USDC grant for an enabled
 * agent, the purchase, its read, the payment sent to the seller as the stock client sends it.
 * Nothing here asserts what a test proves: each helper checks only that its set-up step worked.
 * The README's buyer (stock `@x402/fetch`) is `serviceBuyer` in test/x402/stock-seller.ts.
 *
 * Call `usePurchaseFixture` after the stack's own hooks are declared (useTestStack, or a
 * `beforeAll` starting the stack): its `beforeAll` runs after theirs.
 */
import { randomUUID } from 'node:crypto';
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
