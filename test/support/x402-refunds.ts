/**
 * What the tests of x402 refunds share (DESIGN §28, docs/x402.md "Refunds"): a seller agent of the
 * service's facilitator behind the stock `@x402/express` middleware (docs/x402.md's seller), the stock
 * buyer (`@x402/fetch` + `@x402/svm`, paying from the local chain's demo payer), and the refund calls
 * in their own words. Nothing here asserts what a test proves: each helper checks only that its
 * set-up step worked.
 */
import { randomUUID } from 'node:crypto';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import bs58 from 'bs58';
import { eventually } from './eventually';
import type { Reply } from './http';
import type { TestStack } from './stack';
import { startServiceSeller } from './x402';

export interface RefundSeller {
  id: string;
  key: string;
  /** Its stock seller's paid resource. */
  url: string;
}

export interface RefundView {
  id: string;
  paymentId: string;
  amount: number;
  currency: 'USDC';
  to: string;
  status: 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED';
  transaction?: string;
  createdAt?: string;
  error?: string;
}

export interface RefundFixture {
  /** The stock buyer's wallet (the chain's demo payer): where refunds go. */
  readonly payer: string;
  /** A seller agent (enabled; `earned` USDC already earned by charges when given) and its stock seller at $0.01. */
  seller(opts?: { earned?: number }): Promise<RefundSeller>;
  /** The stock buyer pays the seller's resource (200); the payment's id, from the agent's listing. */
  pay(seller: RefundSeller): Promise<string>;
  /** POST /api/v1/agents/x402/payments/{id}/refund (a new Idempotency-Key unless given; no body unless given). */
  refund(agentKey: string, paymentId: string, opts?: { body?: unknown; idempotencyKey?: string }): Promise<Reply<RefundView>>;
  read(agentKey: string, refundId: string): Promise<Reply<RefundView>>;
  /** The refund once COMPLETED or FAILED (the payout worker, then the reconciler). */
  untilFinal(agentKey: string, refundId: string, timeoutMs?: number): Promise<RefundView>;
  /** The payment as the agent's listing shows it. */
  payment(agentKey: string, paymentId: string): Promise<Record<string, unknown>>;
  /** The buyer's USDC on chain, in micro-USDC. */
  payerUsdc(): bigint;
  /** The agent's USDC balance, as it reads it. */
  usdcBalance(agentKey: string): Promise<number>;
}

export function useRefundFixture(t: TestStack): RefundFixture {
  let buyer: x402Client | undefined;
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    const { solana } = t.stack.rails;
    const signer = await createKeyPairSignerFromBytes(bs58.decode(solana.demoPayer.secretKey));
    buyer = new x402Client().register('solana:*', new ExactSvmClient(signer, { rpcUrl: solana.url }));
  });
  afterAll(async () => {
    await Promise.all(closers.map((close) => close()));
  });
  const agentHeaders = (key: string) => ({ 'x-agent-key': key });
  const listing = async (agentKey: string) =>
    (
      await t.call<{ data: Record<string, unknown>[] }>('GET', '/api/v1/agents/x402/payments?limit=100', {
        headers: agentHeaders(agentKey),
      })
    ).body.data;
  const fixture: RefundFixture = {
    get payer() {
      return t.stack.rails.solana.demoPayer.publicKey;
    },
    async seller({ earned } = {}) {
      const agent = earned ? await t.earningAgent({ USDC: earned }) : await t.enabledAgent();
      const started = await startServiceSeller(t, agent.key, { '/weather': { price: '$0.01' } });
      closers.push(started.close);
      return { ...agent, url: `${started.url}/weather` };
    },
    async pay(seller) {
      if (!buyer) throw new Error('the refund fixture is read before its beforeAll made the buyer');
      const before = new Set((await listing(seller.key)).map((p) => String(p.id)));
      // The local chain makes a blockhash only when a transaction lands: two alike payments on one would be one message.
      t.stack.rails.solana.expireBlockhash();
      const res = await wrapFetchWithPayment(fetch, buyer)(seller.url);
      expect(res.status).toBe(200);
      const made = (await listing(seller.key)).filter((p) => !before.has(String(p.id)));
      expect(made).toHaveLength(1);
      return String(made[0]?.id);
    },
    refund(agentKey, paymentId, { body, idempotencyKey } = {}) {
      return t.call<RefundView>('POST', `/api/v1/agents/x402/payments/${paymentId}/refund`, {
        headers: { ...agentHeaders(agentKey), 'idempotency-key': idempotencyKey ?? randomUUID() },
        ...(body === undefined ? {} : { body }),
      });
    },
    read(agentKey, refundId) {
      return t.call<RefundView>('GET', `/api/v1/agents/x402/refunds/${refundId}`, { headers: agentHeaders(agentKey) });
    },
    untilFinal(agentKey, refundId, timeoutMs = 30_000) {
      return eventually(
        `refund ${refundId} to be COMPLETED or FAILED`,
        async () => {
          const res = await fixture.read(agentKey, refundId);
          if (res.status !== 200) throw new Error(`refund ${refundId}: ${res.status} ${res.text}`);
          if (res.body.status !== 'COMPLETED' && res.body.status !== 'FAILED')
            throw new Error(`refund ${refundId} still ${res.body.status}`);
          return res.body;
        },
        { timeoutMs, intervalMs: 100 },
      );
    },
    async payment(agentKey, paymentId) {
      const found = (await listing(agentKey)).find((p) => p.id === paymentId);
      if (!found) throw new Error(`payment ${paymentId} is not in the listing`);
      return found;
    },
    payerUsdc() {
      return t.stack.rails.solana.tokenBalance(t.stack.rails.solana.demoPayer.publicKey);
    },
    async usdcBalance(agentKey) {
      return (await t.call<{ balances: { USDC: number } }>('GET', '/api/v1/agents/balance', { headers: agentHeaders(agentKey) })).body
        .balances.USDC;
    },
  };
  return fixture;
}
