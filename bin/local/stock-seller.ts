/**
 * An x402 seller outside the service, built only of stock packages (DESIGN §22 "Tests that no one
 * here can tune"): `@x402/express` middleware whose facilitator is the stock `@x402/svm` one
 * (`x402Facilitator` + `ExactSvmScheme` from `@x402/svm/exact/facilitator`) with its own fee payer,
 * paying a wallet of its own. `npm run x402-seller` runs it against `npm start`'s chain (README "Buy
 * from x402 sellers"); the purchase e2e tests run it in-process (test/x402/stock-seller.ts).
 *
 * Its setup is what a seller does on any cluster, with real transactions: SOL for the fee payer
 * from a funded payer, and the wallet's USDC token account created by the fee payer.
 */
import type { AddressInfo } from 'node:net';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { createAssociatedTokenAccountIdempotentInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Connection, Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { x402Facilitator } from '@x402/core/facilitator';
import type { Network, PaymentPayload, PaymentRequirements, SupportedResponse } from '@x402/core/types';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { toFacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme as ExactSvmFacilitator } from '@x402/svm/exact/facilitator';
import { ExactSvmScheme as ExactSvmServer } from '@x402/svm/exact/server';
import bs58 from 'bs58';
// @ts-expect-error express ships no types and @types/express is not installed; the seller here is a few lines.
import express from 'express';

/** The chain the seller works on: its RPC, its CAIP-2 network id, and a payer with SOL to fund the seller's fee payer. */
export interface SellerChain {
  url: string;
  network: string;
  /** The USDC mint the seller is paid in (its wallet's token account is created for it). */
  mint: string;
  /** A funded keypair (base58 secret key): the demo payer of the local chain. */
  funderSecretKey: string;
}

export interface StockSeller {
  url: string;
  /** The seller's own wallet (payTo): outside the service. */
  wallet: string;
  /** The seller's facilitator's fee payer. */
  feePayer: string;
  /** Settlements the stock facilitator made, in order. */
  settled: { transaction: string; success: boolean; errorReason?: string }[];
  close(): Promise<void>;
}

/** Sends and waits for `confirmed` by polling (the local node has no websocket for web3.js's confirmTransaction). */
async function send(connection: Connection, tx: Transaction, signers: Keypair[]): Promise<void> {
  tx.recentBlockhash = (await connection.getLatestBlockhash()).blockhash;
  tx.sign(...signers);
  const signature = await connection.sendRawTransaction(tx.serialize());
  for (let i = 0; i < 60; i++) {
    const { value } = await connection.getSignatureStatuses([signature]);
    const status = value[0];
    if (status?.err) throw new Error(`transaction ${signature} failed: ${JSON.stringify(status.err)}`);
    if (status?.confirmationStatus === 'confirmed' || status?.confirmationStatus === 'finalized') return;
    await new Promise((done) => setTimeout(done, 500));
  }
  throw new Error(`transaction ${signature} not confirmed within 30 s`);
}

/** Moves SOL from the funded `payer` (a transaction that lands: a block). */
export async function fundSol(rpcUrl: string, payerSecretKey: string, to: string, lamports: number): Promise<void> {
  const payer = Keypair.fromSecretKey(bs58.decode(payerSecretKey));
  const tx = new Transaction({ feePayer: payer.publicKey }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: new PublicKey(to), lamports }),
  );
  await send(new Connection(rpcUrl, 'confirmed'), tx, [payer]);
}

/**
 * A stock seller charging `price` (`$0.01` style, USDC) for GET /weather, settling through the stock
 * facilitator. Listens on `port` (0: any free one) of 127.0.0.1.
 */
export async function startStockSeller(
  chain: SellerChain,
  price: string,
  opts: { port?: number; onSettled?: (settlement: StockSeller['settled'][number]) => void } = {},
): Promise<StockSeller> {
  const feePayerKeys = Keypair.generate();
  const walletKeys = Keypair.generate();
  const wallet = walletKeys.publicKey.toBase58();
  await fundSol(chain.url, chain.funderSecretKey, feePayerKeys.publicKey.toBase58(), 1_000_000_000);
  const mint = new PublicKey(chain.mint);
  await send(
    new Connection(chain.url, 'confirmed'),
    new Transaction({ feePayer: feePayerKeys.publicKey }).add(
      createAssociatedTokenAccountIdempotentInstruction(
        feePayerKeys.publicKey,
        getAssociatedTokenAddressSync(mint, walletKeys.publicKey),
        walletKeys.publicKey,
        mint,
      ),
    ),
    [feePayerKeys],
  );
  const feePayer = await createKeyPairSignerFromBytes(feePayerKeys.secretKey);
  const network = chain.network as Network;
  const stock = new x402Facilitator().register(
    network,
    new ExactSvmFacilitator(toFacilitatorSvmSigner(feePayer, { defaultRpcUrl: chain.url })),
  );
  const settled: StockSeller['settled'] = [];
  const facilitatorClient = {
    verify: (p: PaymentPayload, r: PaymentRequirements) => stock.verify(p, r),
    settle: async (p: PaymentPayload, r: PaymentRequirements) => {
      const answer = await stock.settle(p, r);
      const settlement = {
        transaction: answer.transaction,
        success: answer.success,
        ...(answer.errorReason ? { errorReason: answer.errorReason } : {}),
      };
      settled.push(settlement);
      opts.onSettled?.(settlement);
      return answer;
    },
    getSupported: async () => stock.getSupported() as SupportedResponse,
  };
  const server = new x402ResourceServer(facilitatorClient).register(network, new ExactSvmServer());
  const app = express();
  app.use(
    paymentMiddleware(
      { 'GET /weather': { accepts: { scheme: 'exact', price, network, payTo: wallet }, description: 'a forecast' } },
      server,
    ),
  );
  app.get('/weather', (_req: unknown, res: { json(body: unknown): void }) => res.json({ forecast: 'sunny' }));
  return new Promise((resolve, reject) => {
    const listener = app.listen(opts.port ?? 0, '127.0.0.1', (error?: Error) => {
      if (error) return reject(error);
      resolve({
        url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}`,
        wallet,
        feePayer: feePayer.address,
        settled,
        close: () => new Promise((done) => listener.close(() => done())),
      });
    });
  });
}
