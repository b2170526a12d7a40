/**
 * Attack (issue 38, DESIGN §24): purchases that never land, buried under spam. An agent of the
 * attacker's own makes more purchases than the reconciler read in one run (its oldest 100) and
 * never sends them; then small transfers to the hot wallet's token account (mints of 1 micro-USDC
 * here, zero-amount transfers in the report: about 0.1 SOL for 20,000) push the slots their
 * transfers could be in out of a run's search. Before, every run read those same 100 and nothing
 * else: every later purchase of every payer stayed PENDING, its transfer landed and not captured,
 * and the audit saw the hot wallet drained.
 *
 * Property: buried purchases never delay another's. A run reads every due purchase (paged), so
 * another payer's is captured in the same run; each buried one waits (1 min, doubling to 1 h)
 * before it is searched for again, and the X402PurchasesUnsearched gauge counts them all the while.
 * The search reads 20 signatures here (MAX_SEARCHED_SIGNATURES stands for 20,000 a run), so 30
 * mints bury them.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { X402_PURCHASES_UNSEARCHED_METRIC } from '../../functions/observability/metric-names';
import { metrics } from '../../functions/observability/metrics';
import { railFor } from '../../functions/rails';
import { createReconciler } from '../../functions/reconciler/reconciler';
import { db } from '../../functions/store/client';
import { keys } from '../../functions/store/table';
import { reconcilePurchases } from '../../functions/use-cases/x402-purchases/purchase-reconcile';
import { type PurchaseChain, purchaseChain } from '../../functions/x402/purchase-chain';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { usePurchaseFixture } from '../support/x402';

// No reconciler on an interval: each run here is the test's own.
const t = useTestStack({}, { payouts: { reconcileIntervalMs: 3_600_000 } });
const x402 = usePurchaseFixture(t);
afterAll(async () => {
  await expectLedgerBalanced();
});

type Purchase = { id: string; status: string; paymentPayload: Record<string, unknown> | null };

/** More than the one page (100) a run read before. */
const BURIED = 101;
/** Signatures one search reads, standing for MAX_SEARCHED_SIGNATURES; the spam is more. */
const SEARCH_LIMIT = 20;
const SPAM = 30;

/** The chain as the reconciler reads it, its searches stopping at SEARCH_LIMIT signatures. */
async function limitedSearch(): Promise<PurchaseChain> {
  const chain = await purchaseChain();
  return { ...chain, findLanded: (signed, opts) => chain.findLanded(signed, { ...opts, maxSignatures: SEARCH_LIMIT }) };
}

const minutesLater = (minutes: number) => new Date(Date.now() + minutes * 60_000);

async function marker(purchaseId: string) {
  const chargeId = `c${purchaseId.slice(2)}`;
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.pendingCharge(chargeId) }));
  return out.Item ?? {};
}

/** Another payer's purchase, its payment sent to the seller and landed on top of everything. */
async function paidPurchase() {
  const buyer = await x402.buyer();
  const accepted = await x402.requirements();
  const made = await x402.buy<Purchase>(buyer, accepted);
  expect(made.status).toBe(201);
  expect((await x402.pay(made.body.paymentPayload, accepted)).status).toBe(200);
  return { ...buyer, purchase: made.body };
}

const read = async (agentKey: string, id: string) => (await x402.read<Purchase>(agentKey, id)).body;

describe('purchases buried under spam', () => {
  const buried: string[] = [];
  let attacker: Awaited<ReturnType<typeof x402.buyer>>;

  beforeAll(async () => {
    attacker = await x402.buyer({ usdc: 2, grant: { limits: { total: 5 } } });
    const accepted = await x402.requirements();
    for (let i = 0; i < BURIED; i++) {
      const made = await x402.buy<Purchase>(attacker, accepted);
      expect(made.status).toBe(201);
      buried.push(made.body.id);
    }
    const { solana } = t.stack.rails;
    for (let i = 0; i < SPAM; i++) solana.mintTo(solana.hotWallet.publicKey, 1n);
    solana.expireBlockhash();
  }, 120_000);

  it("another payer's purchase is captured in the same run; the buried ones wait, counted by the gauge", async () => {
    const other = await paidPurchase();
    const recorded = jest.spyOn(metrics(), 'addMetric');
    const gauge = () => recorded.mock.calls.filter(([name]) => name === X402_PURCHASES_UNSEARCHED_METRIC).map(([, , value]) => value);
    try {
      const run = await createReconciler({ railFor, purchaseChain: limitedSearch })();
      expect(run.purchases).toMatchObject({ checked: BURIED + 1, captured: 1, expired: 0, deferred: BURIED, unsearched: BURIED });
      expect((await read(other.agent.key, other.purchase.id)).status).toBe('SUCCESS');
      expect(await x402.usdcBalance(other.user.id)).toBeCloseTo(0.99, 6);
      // Each buried one waits a minute before it is searched for again: the next run does not read them.
      expect(await marker(buried[0] as string)).toMatchObject({ searchBackoffSeconds: 60 });
      const next = await createReconciler({ railFor, purchaseChain: limitedSearch })();
      expect(next.purchases).toMatchObject({ checked: 0, captured: 0, unsearched: BURIED });
      // The gauge counts them on every run, waiting or searched: the alarm stays on while they wait.
      expect(gauge()).toEqual([BURIED, BURIED]);
    } finally {
      recorded.mockRestore();
    }
    for (const id of buried) expect((await read(attacker.agent.key, id)).status).toBe('PENDING');
  });

  it('a buried purchase is searched for again once its wait is over, then after twice the wait', async () => {
    // In pages of 7: every page of them read in the one run.
    const due = await reconcilePurchases(await limitedSearch(), { now: minutesLater(2), pageSize: 7 });
    expect(due).toMatchObject({ checked: BURIED, deferred: BURIED, unsearched: BURIED });
    expect(await marker(buried[0] as string)).toMatchObject({ searchBackoffSeconds: 120 });
    // Another payer's purchase made meanwhile is not held up by them either.
    const other = await paidPurchase();
    const run = await reconcilePurchases(await limitedSearch(), { now: minutesLater(3) });
    expect(run).toMatchObject({ checked: 1, captured: 1, unsearched: BURIED });
    expect((await read(other.agent.key, other.purchase.id)).status).toBe('SUCCESS');
  });

  it('a run out of time stops before it judges anything, and leaves every due purchase due', async () => {
    const other = await paidPurchase();
    const chain = await purchaseChain();
    // The search outlasts the sweep's deadline (a slow RPC).
    const slow: PurchaseChain = {
      ...chain,
      findLanded: async (signed, opts) => {
        const found = await chain.findLanded(signed, opts);
        await new Promise((resolve) => setTimeout(resolve, 300));
        return found;
      },
    };
    const cut = await reconcilePurchases(slow, { now: minutesLater(3), deadline: Date.now() + 100 });
    expect(cut).toMatchObject({ checked: 0, captured: 0, deferred: 0, outOfTime: true });
    expect((await read(other.agent.key, other.purchase.id)).status).toBe('PENDING');
    expect(await marker(buried[0] as string)).toMatchObject({ searchBackoffSeconds: 120 });
    expect(await reconcilePurchases(chain, { now: minutesLater(3) })).toMatchObject({ checked: 1, captured: 1 });
  });
});
