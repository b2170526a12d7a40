/**
 * The reconciler's sweeps inside its Lambda run (DESIGN §24, functions/reconciler/run-deadlines.ts):
 * each has a deadline from the remaining time, so a long sweep stops cleanly, the rest of its list
 * left for the next run, and the sweeps after it still get their turn; one sweep's failure skips
 * none of the others either. A chain that answers slowly stands in for a slow RPC.
 */
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import type { Minor } from '../../functions/core/money';
import { createReconciler } from '../../functions/reconciler/reconciler';
import { claimSettlement } from '../../functions/store/x402-facilitator/x402.repository';
import type { Facilitator } from '../../functions/x402/facilitator';
import type { PurchaseChain } from '../../functions/x402/purchase-chain';
import { FakeRail, fakeRails } from '../support/fake-rail';
import { createTestTable } from '../support/table';

const SETTLEMENTS = 20;
const STATUS_MS = 100;

beforeAll(async () => {
  await createTestTable();
  // x402 settlements whose settle died: claimed, never credited (the chain has never seen them).
  const claimedAt = new Date(Date.now() - 10 * 60_000);
  for (let i = 0; i < SETTLEMENTS; i++) {
    await claimSettlement(
      {
        messageHash: randomBytes(32).toString('hex'),
        signature: bs58.encode(randomBytes(64)),
        agentId: `a${i}`,
        amount: 10_000 as Minor,
        payer: bs58.encode(randomBytes(32)),
        network: 'solana:test',
        resource: null,
      },
      claimedAt,
    );
  }
});

/** A facilitator whose every status takes STATUS_MS: the x402 sweep could run longer than the whole Lambda. */
function slowFacilitator(calls: string[]): Facilitator {
  return {
    feePayerLamports: async () => 1_000_000_000,
    chainStatus: async (signature: string) => {
      calls.push(signature);
      await new Promise((resolve) => setTimeout(resolve, STATUS_MS));
      return { kind: 'unknown' };
    },
  } as Partial<Facilitator> as Facilitator;
}

const noPurchases: PurchaseChain = {
  finalizedTip: async () => ({ height: 0, slot: 0 }),
  landedAs: async () => undefined,
  findLanded: async () => ({ found: new Map(), covered: new Set(), read: 0 }),
};

describe("the reconciler's sweeps share its run", () => {
  it('the x402 sweep stops at its deadline, leaving the rest for the next run; finality and purchases still run', async () => {
    const calls: string[] = [];
    let purchaseSweeps = 0;
    const reconciler = createReconciler({
      railFor: fakeRails(new FakeRail()),
      x402Facilitator: async () => slowFacilitator(calls),
      purchaseChain: async () => {
        purchaseSweeps += 1;
        return noPurchases;
      },
    });
    // A run with 5 s left: 3 s kept at the end, the x402 sweep's share a fraction of the other 2 s.
    const started = Date.now();
    const run = await reconciler(undefined, { getRemainingTimeInMillis: () => 5_000 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(run.x402).toMatchObject({ credited: 0, outOfTime: true, finality: { finalized: 0, mismatched: 0, waiting: 0 } });
    const first = run.x402?.stillPending ?? 0;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(SETTLEMENTS);
    expect(calls).toHaveLength(first);
    expect(purchaseSweeps).toBe(1);
    expect(run.purchases).toMatchObject({ checked: 0, unsearched: 0 });

    // The next run, with time to spare: the ones not looked at, first (those looked at went to the back).
    const next = await reconciler(undefined, { getRemainingTimeInMillis: () => 60_000 });
    expect(next.x402).toMatchObject({ stillPending: SETTLEMENTS - first });
    expect(next.x402?.outOfTime).toBeUndefined();
    expect(new Set(calls).size).toBe(SETTLEMENTS);
  });

  it("one sweep's failure skips none after it: the purchase sweep runs, then the run fails", async () => {
    let purchaseSweeps = 0;
    const reconciler = createReconciler({
      railFor: fakeRails(new FakeRail()),
      // The x402 sweep cannot reach its chain (the hot wallet's SOL is read apart: infra's reportHotWallet).
      x402Facilitator: async () => {
        throw new Error('RPC down');
      },
      purchaseChain: async () => {
        purchaseSweeps += 1;
        return noPurchases;
      },
    });
    await expect(reconciler(undefined, { getRemainingTimeInMillis: () => 60_000 })).rejects.toThrow('RPC down');
    expect(purchaseSweeps).toBe(1);
  });
});
