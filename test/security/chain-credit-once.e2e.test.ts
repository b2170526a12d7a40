/**
 * Issue 29, finding 4: one on-chain transfer credited twice. With the deposit wallet = the x402
 * treasury (the hot wallet, by default), an x402 payment that carries a top-up's reference as an
 * extra account of its transfer is credited to the seller agent by settle *and* completes the
 * payer's top-up when the watcher finds the reference: two credit-once guards (`X402TX#sig`,
 * `TOPUPCREDIT#SOL#sig`) that did not know each other.
 *
 * The attacker: a payer with an open USDC top-up who is also (or colludes with) an x402 seller.
 * The property: one transfer is credited at most once across every rail, whichever rail comes
 * first; and the overlapping configuration is refused where it can be seen (config load, synth).
 *
 * On AWS each function sees only its own part of the configuration (the watcher its deposit
 * wallet, the x402 functions their treasury), so a watcher whose deposit wallet is the treasury is
 * played here by the watcher running with SOLANA_DEPOSIT_ADDRESS = the hot wallet and no
 * X402_PAY_TO: what it would see if the synth check were bypassed.
 */
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { Keypair, PublicKey, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import type { PaymentPayload } from '@x402/core/types';
import { x402Client } from '@x402/fetch';
import { ExactSvmScheme as ExactSvmClient } from '@x402/svm/exact/client';
import bs58 from 'bs58';
import { config, resetForTests } from '../../functions/config';
import { railFor } from '../../functions/rails';
import { createReconciler } from '../../functions/reconciler/reconciler';
import { listUnmatched } from '../../functions/store/topups/topup-watch.repository';
import { getSettlement } from '../../functions/store/x402-facilitator/x402.repository';
import { createWatcher } from '../../functions/use-cases/topups/topup-watch';
import { readOnlyFacilitator } from '../../functions/x402/facilitator';
import { parseStageConfig } from '../../lib/stage-config';
import { crash, inject } from '../faults/inject';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { balances, getTopup, openTopup } from '../topups/support';

const t = useTestStack();
let buyer: x402Client;
let buyerKeypair: Keypair;
let hot: string;

beforeAll(async () => {
  const { solana } = t.stack.rails;
  hot = solana.hotWallet.publicKey;
  buyerKeypair = Keypair.fromSecretKey(bs58.decode(solana.demoPayer.secretKey));
  const signer = await createKeyPairSignerFromBytes(bs58.decode(solana.demoPayer.secretKey));
  buyer = new x402Client().register('solana:*', new ExactSvmClient(signer, { rpcUrl: solana.url }));
});
afterEach(async () => {
  await expectLedgerBalanced();
});

/** Runs `work` with these variables set (undefined: unset), the configuration re-read before and after. */
async function withEnv<T>(vars: Record<string, string | undefined>, work: () => Promise<T> | T): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((name) => [name, process.env[name]]));
  const apply = (values: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    resetForTests();
  };
  apply(vars);
  try {
    return await work();
  } finally {
    apply(saved);
  }
}

/** The watcher as it runs when its deposit wallet is the treasury (the hot wallet). */
const watchAsTreasuryDeposit = () => withEnv({ SOLANA_DEPOSIT_ADDRESS: hot, X402_PAY_TO: undefined }, () => createWatcher()());

/** A stock buyer's payment of `amount` micro-USDC to the treasury for `sellerId` (signed, not sent; its memo names the seller). */
function x402Payment(amount: number, sellerId: string): Promise<PaymentPayload> {
  const { solana } = t.stack.rails;
  // Two payments of one price under one blockhash would be one transaction: move it on.
  solana.expireBlockhash();
  return buyer.createPaymentPayload({
    x402Version: 2,
    resource: { url: 'https://seller.example.com/report', description: 'report', mimeType: 'application/json' },
    accepts: [
      {
        scheme: 'exact',
        network: solana.network as `${string}:${string}`,
        asset: solana.mint,
        amount: String(amount),
        payTo: hot,
        maxTimeoutSeconds: 60,
        extra: { feePayer: hot, memo: `x402:${sellerId}` },
      },
    ],
  });
}

/**
 * The attacker's edit: `reference` appended as a read-only account of the transfer instruction (as
 * Solana Pay carries a reference), the buyer signing again. The stock scheme checks the transfer's
 * source, mint, destination, authority and amount, not its extra accounts: the payment stays valid.
 */
function carryingReference(payload: PaymentPayload, reference: string): PaymentPayload {
  const wire = String((payload.payload as { transaction: string }).transaction);
  const tx = VersionedTransaction.deserialize(Buffer.from(wire, 'base64'));
  const message = TransactionMessage.decompile(tx.message);
  const transfer = message.instructions[2];
  if (!transfer) throw new Error('the stock payment has no transfer instruction');
  transfer.keys.push({ pubkey: new PublicKey(reference), isSigner: false, isWritable: false });
  const edited = new VersionedTransaction(message.compileToV0Message());
  edited.sign([buyerKeypair]);
  return { ...payload, payload: { ...payload.payload, transaction: Buffer.from(edited.serialize()).toString('base64') } };
}

const settle = (agentKey: string, payload: PaymentPayload) =>
  t.call<{ success: boolean; transaction: string; errorReason?: string }>('POST', '/x402/settle', {
    headers: { 'x-agent-key': agentKey },
    body: { x402Version: 2, paymentPayload: payload, paymentRequirements: payload.accepted },
  });

const agentUsdc = async (key: string) =>
  (await t.call<{ balances: { USDC: number } }>('GET', '/api/v1/agents/balance', { headers: { 'x-agent-key': key } })).body.balances.USDC;

describe('an x402 payment carrying a top-up reference (deposit wallet = treasury)', () => {
  it('is credited once: to the seller who settled it, never also to the top-up', async () => {
    const seller = await t.enabledAgent();
    const payer = await t.fundedUser();
    // The top-up asks for exactly what the x402 payment carries: nothing but the guard tells them apart.
    const topup = (await openTopup(t, payer.key, { currency: 'USDC', amount: 0.25 })).body;
    const payment = carryingReference(await x402Payment(250_000, seller.id), topup.reference ?? '');

    const settled = await settle(seller.key, payment);
    expect(settled.body).toMatchObject({ success: true });
    expect(await agentUsdc(seller.key)).toBe(0.25);

    // The watcher finds the transfer by the top-up's reference, paid into "its" deposit wallet.
    await watchAsTreasuryDeposit();

    expect(await balances(t, payer.key)).toEqual({ USD: 0, USDC: 0 });
    expect((await getTopup(t, payer.key, topup.id)).body).toMatchObject({ status: 'PENDING', externalId: null });
    expect(await agentUsdc(seller.key)).toBe(0.25);
    // Credited, so not "unmatched" money an operator should refund either.
    expect((await listUnmatched()).map((u) => u.signature)).not.toContain(settled.body.transaction);
    // Seen again by the next run: still nothing more.
    await watchAsTreasuryDeposit();
    expect((await getTopup(t, payer.key, topup.id)).body.status).toBe('PENDING');
    expect(await balances(t, payer.key)).toEqual({ USD: 0, USDC: 0 });
  });

  it('is credited once when the top-up is credited first: the x402 settlement is refused, not credited too', async () => {
    const seller = await t.enabledAgent();
    const payer = await t.fundedUser();
    const topup = (await openTopup(t, payer.key, { currency: 'USDC', amount: 0.3 })).body;
    const payment = carryingReference(await x402Payment(300_000, seller.id), topup.reference ?? '');

    // Settle sends the transfer, it confirms, and the process dies at the credit's commit.
    const creditCommit = (input: Record<string, unknown>) =>
      ((input.TransactItems as { Update?: { Key?: { PK?: unknown } } }[] | undefined) ?? []).some((i) =>
        String(i.Update?.Key?.PK ?? '').startsWith('X402TX#'),
      );
    const fault = inject({ command: 'TransactWriteItemsCommand', match: creditCommit, times: 1, error: crash });
    let signature: string;
    try {
      const res = await fetch(`${t.stack.url}/x402/settle`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-agent-key': seller.key },
        body: JSON.stringify({ x402Version: 2, paymentPayload: payment, paymentRequirements: payment.accepted }),
      });
      expect(res.status).toBe(500);
      // The transfer that landed: its first signature is the fee payer's, made by settle.
      signature = t.stack.rails.solana.landed().at(-1)?.signature ?? '';
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBe(1);

    // The watcher comes first this time: the transfer completes the top-up.
    await watchAsTreasuryDeposit();
    expect((await getTopup(t, payer.key, topup.id)).body).toMatchObject({ status: 'COMPLETED', amount: 0.3 });
    expect(await balances(t, payer.key)).toEqual({ USD: 0, USDC: 0.3 });

    // Then the reconciler finds the confirmed settlement: the agent is not credited the same transfer.
    const later = new Date(Date.now() + 3_600_000);
    await createReconciler({ railFor, clock: () => later, x402Facilitator: readOnlyFacilitator })();
    expect(await agentUsdc(seller.key)).toBe(0);
    expect(await getSettlement((await readOnlyFacilitator()).messageHash(payment) ?? '')).toMatchObject({ status: 'FAILED', signature });
    // And the seller's retry is told so, crediting nothing.
    expect((await settle(seller.key, payment)).body).toMatchObject({ success: false });
    expect(await agentUsdc(seller.key)).toBe(0);
    expect(await balances(t, payer.key)).toEqual({ USD: 0, USDC: 0.3 });
  });
});

describe('the overlapping configuration is refused', () => {
  it('at config load: a deposit wallet that is the x402 treasury', async () => {
    await withEnv({ SOLANA_DEPOSIT_ADDRESS: hot, X402_PAY_TO: hot }, () => {
      expect(() => config()).toThrow(
        /SOLANA_DEPOSIT_ADDRESS: must not be the x402 treasury \(X402_PAY_TO\): a transfer to it could be credited both as a top-up and as an x402 payment/,
      );
    });
    // The local stack's own (a deposit wallet of its own) loads.
    expect(config().SOLANA_DEPOSIT_ADDRESS).toBe(t.stack.rails.solana.depositWallet);
  });

  it('at synth: depositAddress = x402PayTo, or = hotWalletAddress while x402PayTo is unset (the treasury by default)', () => {
    const base = {
      stage: 'staging',
      usdcMint: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
      paypalMode: 'sandbox',
      publicBaseUrl: 'https://pay.staging.example.com',
      throttleRateLimit: 50,
      throttleBurstLimit: 100,
    };
    const wallet = Keypair.generate().publicKey.toBase58();
    const other = Keypair.generate().publicKey.toBase58();
    const message = /depositAddress: must not be the x402 treasury/;
    expect(() => parseStageConfig({ ...base, hotWalletAddress: wallet, depositAddress: wallet })).toThrow(message);
    expect(() => parseStageConfig({ ...base, x402PayTo: wallet, depositAddress: wallet })).toThrow(message);
    expect(() => parseStageConfig({ ...base, hotWalletAddress: other, x402PayTo: wallet, depositAddress: wallet })).toThrow(message);
    // The deposit wallet may be the hot wallet when the treasury is another wallet (top-ups refill the float).
    expect(parseStageConfig({ ...base, hotWalletAddress: wallet, x402PayTo: other, depositAddress: wallet }).depositAddress).toBe(wallet);
    expect(parseStageConfig({ ...base, hotWalletAddress: wallet, depositAddress: other }).depositAddress).toBe(other);
  });
});
