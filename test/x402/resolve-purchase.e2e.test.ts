/**
 * The operator's settling of a purchase the reconciler cannot reach (DESIGN §24, docs/operator-cli.md
 * "x402 purchases the reconciler cannot reach"): `npm run admin -- resolve-purchase <id>` searches
 * the hot wallet token account's whole history and captures (its transfer found) or releases (its
 * blockhash past at `finalized`, the transfer not there), in the reconciler's own transaction, so
 * the ledger audit after each test holds. Exactly once: racing the reconciler, one ending commits
 * and the other sees it done, whichever reads first.
 */
import { runAdmin } from '../../bin/operator/admin-cli';
import { railFor } from '../../functions/rails';
import { createReconciler } from '../../functions/reconciler/reconciler';
import { reconcilePurchases, resolvePurchase } from '../../functions/use-cases/x402-purchases/purchase-reconcile';
import { type PurchaseChain, purchaseChain } from '../../functions/x402/purchase-chain';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { usePurchaseFixture } from '../support/x402';

const t = useTestStack({}, { payouts: { reconcileIntervalMs: 3_600_000 } });
const x402 = usePurchaseFixture(t);
afterEach(async () => {
  await expectLedgerBalanced();
});

type Purchase = { id: string; status: string; transaction: string | null; paymentPayload: Record<string, unknown> | null };

/** Signatures the reconciler's search reads here (MAX_SEARCHED_SIGNATURES stands for 20,000); SPAM buries past it. */
const SEARCH_LIMIT = 10;
const SPAM = 15;

async function admin(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runAdmin(argv, { out: (text) => out.push(text), err: (text) => err.push(text) });
  return {
    code,
    stderr: err.join('\n'),
    json: out.length > 0 && out.join('') ? (JSON.parse(out.join('\n')) as Record<string, unknown>) : undefined,
  };
}

async function made(opts: { pay: boolean }) {
  const buyer = await x402.buyer();
  const accepted = await x402.requirements();
  const res = await x402.buy<Purchase>(buyer, accepted);
  expect(res.status).toBe(201);
  if (opts.pay) expect((await x402.pay(res.body.paymentPayload, accepted)).status).toBe(200);
  return { ...buyer, purchase: res.body };
}

const read = async (agentKey: string, id: string) => (await x402.read<Purchase>(agentKey, id)).body;

/** Spam to the hot wallet's token account past the search limit, and every blockhash so far expired. */
function bury() {
  const { solana } = t.stack.rails;
  for (let i = 0; i < SPAM; i++) solana.mintTo(solana.hotWallet.publicKey, 1n);
  solana.expireBlockhash();
}

/** The reconciler's purchase sweep with its search limited to SEARCH_LIMIT signatures. */
async function limitedSweep() {
  const chain = await purchaseChain();
  return reconcilePurchases({ ...chain, findLanded: (signed, opts) => chain.findLanded(signed, { ...opts, maxSignatures: SEARCH_LIMIT }) });
}

describe('npm run admin -- resolve-purchase', () => {
  it('captures a purchase whose transfer landed under more transactions than a run reads', async () => {
    const { agent, user, purchase } = await made({ pay: true });
    bury();
    expect(await limitedSweep()).toMatchObject({ captured: 0, deferred: 1 });
    expect((await read(agent.key, purchase.id)).status).toBe('PENDING');
    const resolved = await admin('resolve-purchase', purchase.id);
    expect(resolved).toMatchObject({
      code: 0,
      stderr: '',
      json: { resolved: 'captured', agentId: agent.id, userId: user.id, purchase: { id: purchase.id, status: 'SUCCESS' } },
    });
    expect(Number(resolved.json?.signaturesRead)).toBeGreaterThan(SPAM);
    const now = await read(agent.key, purchase.id);
    expect(now).toMatchObject({ status: 'SUCCESS', transaction: expect.any(String) });
    expect(await x402.usdcBalance(user.id)).toBeCloseTo(0.99, 6);
    // Done: run again, it refuses and moves nothing.
    expect(await admin('resolve-purchase', purchase.id)).toMatchObject({ code: 1, stderr: 'error: purchase already ended: SUCCESS' });
  });

  it("releases a buried purchase never sent, named by its hold's charge id as the log names it", async () => {
    const { agent, user, purchase } = await made({ pay: false });
    bury();
    expect(await limitedSweep()).toMatchObject({ expired: 0, deferred: 1 });
    const resolved = await admin('resolve-purchase', `c${purchase.id.slice(2)}`);
    expect(resolved).toMatchObject({ code: 0, json: { resolved: 'released', purchase: { status: 'EXPIRED' } } });
    expect(await read(agent.key, purchase.id)).toMatchObject({ status: 'EXPIRED', transaction: null });
    expect(await x402.usdcBalance(user.id)).toBe(1);
  });

  it('refuses a payment that may still land, a purchase with no signed payment, an unknown id, and --api', async () => {
    const fresh = await made({ pay: false });
    const refused = await admin('resolve-purchase', fresh.purchase.id);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^error: purchase's payment may still land: finalized block height \d+ is not past its last valid block height \d+/,
    );
    expect((await read(fresh.agent.key, fresh.purchase.id)).status).toBe('PENDING');

    const waiting = await x402.buyer({ grant: { limits: { total: 5 }, approvalAbove: 0.005 } });
    const approval = await x402.buy<Purchase>(waiting, await x402.requirements());
    expect(approval.status).toBe(202);
    expect(await admin('resolve-purchase', approval.body.id)).toMatchObject({
      code: 1,
      stderr: 'error: purchase has no signed payment: it ends as any hold does (approval, release, expiry)',
    });
    expect(await admin('resolve-purchase', 'xp01jhx3k6v1f8q2n7c9m4p5r6s7a01jhx3k6v1f8q2n7c9m4p5r6s7')).toMatchObject({
      code: 1,
      stderr: 'error: purchase not found',
    });
    expect(await admin('resolve-purchase', 'nonsense')).toMatchObject({ code: 1, stderr: 'error: purchase not found' });
    const api = await admin('resolve-purchase', fresh.purchase.id, '--api', 'http://127.0.0.1:1', '--admin-key', 'k');
    expect(api.code).toBe(2);
    expect(api.stderr).toMatch(/^error: resolve-purchase works on the table only/);
    // Ended for the audit: the fresh one never sent, the waiting one declined by its payer.
    t.stack.rails.solana.expireBlockhash();
    await reconcilePurchases(await purchaseChain());
    const declined = await t.call('POST', `/api/v1/users/me/charges/${approval.body.id}/decline`, {
      headers: { 'x-user-key': waiting.user.key },
    });
    expect(declined.status).toBe(200);
  });
});

/** The chain, but `between` runs (and completes) after a search and before its caller judges it. */
async function pausedAfterSearch(between: () => Promise<unknown>): Promise<PurchaseChain> {
  const chain = await purchaseChain();
  let paused = false;
  return {
    ...chain,
    findLanded: async (signed, opts) => {
      const found = await chain.findLanded(signed, opts);
      if (!paused) {
        paused = true;
        await between();
      }
      return found;
    },
  };
}

describe('resolve-purchase racing the reconciler: one ending, the other sees it done', () => {
  it("the operator captures between the reconciler's search and its capture: the reconciler captures nothing", async () => {
    const { agent, user, purchase } = await made({ pay: true });
    let byOperator: Awaited<ReturnType<typeof resolvePurchase>> | undefined;
    const chain = await pausedAfterSearch(async () => {
      byOperator = await resolvePurchase(purchase.id, await purchaseChain());
    });
    const run = await createReconciler({ railFor, purchaseChain: async () => chain })();
    expect(byOperator).toMatchObject({ resolved: 'captured', purchase: { status: 'SUCCESS' } });
    expect(run.purchases).toMatchObject({ checked: 1, captured: 0, expired: 0 });
    expect((await read(agent.key, purchase.id)).status).toBe('SUCCESS');
    expect(await x402.usdcBalance(user.id)).toBeCloseTo(0.99, 6);
  });

  it("the reconciler captures between the operator's search and its capture: the operator is told it already ended", async () => {
    const { agent, user, purchase } = await made({ pay: true });
    let run: Awaited<ReturnType<typeof reconcilePurchases>> | undefined;
    const chain = await pausedAfterSearch(async () => {
      run = await reconcilePurchases(await purchaseChain());
    });
    await expect(resolvePurchase(purchase.id, chain)).rejects.toThrow('purchase already ended: SUCCESS');
    expect(run).toMatchObject({ checked: 1, captured: 1 });
    expect((await read(agent.key, purchase.id)).status).toBe('SUCCESS');
    expect(await x402.usdcBalance(user.id)).toBeCloseTo(0.99, 6);
  });
});
