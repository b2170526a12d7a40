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
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { Keypair } from '@solana/web3.js';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import bs58 from 'bs58';
import { x402SettingsSchema } from '../../functions/contracts/x402';
import { HOT_WALLET_LAMPORTS_METRIC, X402_FEE_PAYER_LAMPORTS_METRIC } from '../../functions/observability/metric-names';
import { metrics } from '../../functions/observability/metrics';
import { railFor } from '../../functions/rails';
import { createReconciler } from '../../functions/reconciler/reconciler';
import { readOnlyFacilitator } from '../../functions/x402/facilitator';
import { expectLedgerBalanced } from '../support/audit';
import { expectBody } from '../support/bodies';
import { useTestStack } from '../support/stack';
import { exactTransaction, latestBlockhash, payloadOf, requirementsFor } from '../x402/attacker';

const t = useTestStack();
let seller: { key: string; id: string };
let memo: string | undefined;
let buyer: Keypair;
let treasury: string;

beforeAll(async () => {
  seller = await t.enabledAgent();
  memo = expectBody(await t.call('GET', '/api/v1/agents/x402', { headers: { 'x-agent-key': seller.key } }), x402SettingsSchema).extra.memo;
  buyer = Keypair.fromSecretKey(bs58.decode(t.stack.rails.solana.demoPayer.secretKey));
  treasury = t.stack.rails.solana.hotWallet.publicKey;
});
afterEach(async () => {
  await expectLedgerBalanced();
});

const usdcBalance = async (key: string) =>
  (await t.call<{ balances: { USDC: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': key } })).body.balances.USDC;

/** A 0.01 USDC payment from the demo payer to the seller, with the compute budget the attacker chose. */
async function pricedPayment(computeUnits: number, microLamports: number) {
  const { solana } = t.stack.rails;
  // Each payment under a blockhash of its own (the local chain makes one only when a transaction lands).
  solana.expireBlockhash();
  const { base64 } = exactTransaction({
    feePayer: treasury,
    from: buyer.publicKey.toBase58(),
    to: treasury,
    mint: solana.mint,
    amount: 10_000n,
    computeUnits,
    microLamports,
    memo,
    blockhash: await latestBlockhash(solana.url),
    signers: [buyer],
  });
  return payloadOf(
    base64,
    requirementsFor({ network: solana.network, mint: solana.mint, treasury, feePayer: treasury, amount: 10_000n, memo }),
  );
}

const ask = (path: '/x402/verify' | '/x402/settle', payload: ReturnType<typeof payloadOf>) =>
  t.call<Record<string, unknown>>('POST', path, {
    headers: { authorization: `Bearer ${seller.key}` },
    body: { x402Version: 2, paymentPayload: payload, paymentRequirements: payload.accepted },
  });

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
    solana.expireBlockhash();
    const stock = new ExactSvmClient(await createKeyPairSignerFromBytes(bs58.decode(solana.demoPayer.secretKey)), { rpcUrl: solana.url });
    const requirements = requirementsFor({
      network: solana.network,
      mint: solana.mint,
      treasury,
      feePayer: treasury,
      amount: 10_000n,
      memo,
    });
    const created = await stock.createPaymentPayload(2, requirements);
    const payload = { ...payloadOf(String(created.payload.transaction), requirements) };
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
      await createReconciler({ railFor, x402Facilitator: readOnlyFacilitator })();
      // The stack's own reconciler may run meanwhile: each reading is the wallet's balance.
      const readings = recorded.mock.calls.filter(([name]) => name === HOT_WALLET_LAMPORTS_METRIC).map(([, , value]) => value);
      expect(readings.length).toBeGreaterThanOrEqual(1);
      expect(new Set(readings)).toEqual(new Set([Number(t.stack.rails.solana.lamports(treasury))]));
    } finally {
      recorded.mockRestore();
    }
  });
});
