/**
 * Issue 29, finding 2: the fee payer could be drained. The hot wallet pays the network fee of
 * every x402 transaction, and the buyer writes the compute budget: an `exact` transaction with
 * SetComputeUnitLimit(1,400,000) and SetComputeUnitPrice(5,000,000 µlamports) settled, and the hot
 * wallet paid ~0.007 SOL for a 0.01 USDC payment (700 times the normal fee), as often as the buyer
 * liked. The same wallet pays every USDC payout's fees.
 *
 * The attacker: a buyer paying an agent with a transaction of its own making. The property: what
 * the fee payer can spend on one settlement is capped (a transaction priced above the caps is
 * refused and the fee payer's lamports do not move), a stock buyer's payment still settles, and
 * what each settlement cost the fee payer, and the hot wallet's SOL, are metrics an alarm watches.
 */
import { HOT_WALLET_LAMPORTS_METRIC, X402_FEE_PAYER_LAMPORTS_METRIC } from '../../functions/observability/metric-names';
import { metrics } from '../../functions/observability/metrics';
import { hotWalletLamports, railFor } from '../../functions/rails';
import { createReconciler } from '../../functions/reconciler/reconciler';
import { readOnlyFacilitator } from '../../functions/x402/facilitator';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { type FacilitatorSeller, useFacilitatorFixture } from '../support/x402';

const t = useTestStack();
const x402 = useFacilitatorFixture(t);
let seller: FacilitatorSeller;
let treasury: string;

beforeAll(async () => {
  seller = await x402.seller();
  treasury = x402.treasury;
});
afterEach(async () => {
  await expectLedgerBalanced();
});

const usdcBalance = (key: string) => x402.usdcBalance({ key });

/** A 0.01 USDC payment from the demo payer to the seller, with the compute budget the attacker chose. */
const pricedPayment = (computeUnits: number, microLamports: number) =>
  x402.craftedPayment({ memo: seller.memo, computeUnits, microLamports });

const ask = (path: '/x402/verify' | '/x402/settle', payload: Awaited<ReturnType<typeof pricedPayment>>) =>
  x402.ask(path, seller, payload, payload.accepted, 'bearer');

describe("the fee payer's spend per settlement is capped", () => {
  it.each([
    [
      'SetComputeUnitLimit(1,400,000) and SetComputeUnitPrice(5,000,000)',
      1_400_000,
      5_000_000,
      'invalid_exact_svm_payload_transaction_instructions_compute_limit_instruction_too_high',
    ],
    [
      'SetComputeUnitPrice(5,000,000) under the stock client’s limit',
      20_000,
      5_000_000,
      'invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high',
    ],
  ])('refuses a transaction priced with %s: the fee payer and the treasury do not move', async (_what, computeUnits, microLamports, reason) => {
    const { solana } = t.stack.rails;
    const lamportsBefore = solana.lamports(treasury);
    const usdcBefore = solana.tokenBalance(treasury);
    const payload = await pricedPayment(computeUnits, microLamports);

    const verified = await ask('/x402/verify', payload);
    const settled = await ask('/x402/settle', payload);

    expect(solana.lamports(treasury)).toBe(lamportsBefore);
    expect(solana.tokenBalance(treasury)).toBe(usdcBefore);
    expect(await usdcBalance(seller.key)).toBe(0);
    expect(verified.body).toMatchObject({ isValid: false, invalidReason: reason });
    expect(settled.body).toMatchObject({ success: false, errorReason: reason, transaction: '' });
  });

  it('settles a stock buyer’s payment and records what it cost the fee payer, the lamports that left the hot wallet', async () => {
    const { solana } = t.stack.rails;
    // The stock client's payment, on a fresh blockhash.
    const payload = await x402.payment(x402.requirements(seller.memo));
    const lamportsBefore = solana.lamports(treasury);
    const recorded = jest.spyOn(metrics(), 'addMetric');
    try {
      const settled = await ask('/x402/settle', payload);
      expect(settled.body).toMatchObject({ success: true });
      const spent = lamportsBefore - solana.lamports(treasury);
      // Two signatures (buyer, fee payer) at 5,000 lamports, and the stock client's 20,000 units at 1 µlamport.
      expect(spent).toBe(10_001n);
      expect(recorded.mock.calls.filter(([name]) => name === X402_FEE_PAYER_LAMPORTS_METRIC).map(([, , value]) => value)).toEqual([
        Number(spent),
      ]);
    } finally {
      recorded.mockRestore();
    }
    expect(await usdcBalance(seller.key)).toBeCloseTo(0.01, 6);
  });

  it("the reconciler reports the hot wallet's SOL on every run", async () => {
    const recorded = jest.spyOn(metrics(), 'addMetric');
    try {
      await createReconciler({ railFor, x402Facilitator: readOnlyFacilitator, hotWalletLamports })();
      // The stack's own reconciler may run meanwhile: each reading is the wallet's balance.
      const readings = recorded.mock.calls.filter(([name]) => name === HOT_WALLET_LAMPORTS_METRIC).map(([, , value]) => value);
      expect(readings.length).toBeGreaterThanOrEqual(1);
      expect(new Set(readings)).toEqual(new Set([Number(t.stack.rails.solana.lamports(treasury))]));
    } finally {
      recorded.mockRestore();
    }
  });
});
