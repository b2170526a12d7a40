/**
 * An x402 seller outside the service, built only of stock packages (DESIGN §22 "Tests that no one
 * here can tune"): `@x402/express` middleware whose facilitator is the stock `@x402/svm` one
 * (`x402Facilitator` + `ExactSvmScheme` from `@x402/svm/exact/facilitator`) with its own fee payer,
 * funded with SOL on the local chain, paying a wallet of its own. And the README's buyer: stock
 * `@x402/fetch` with a scheme client of a few lines that asks the service for the payment.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createKeyPairSignerFromBytes } from '@solana/kit';
import { Connection, Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { x402Facilitator } from '@x402/core/facilitator';
import type { Network, PaymentPayload, PaymentRequirements, SupportedResponse } from '@x402/core/types';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { findDefaultAsset, toFacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme as ExactSvmFacilitator } from '@x402/svm/exact/facilitator';
import { ExactSvmScheme as ExactSvmServer } from '@x402/svm/exact/server';
import bs58 from 'bs58';
// @ts-expect-error express ships no types and @types/express is not installed; the seller here is a few lines.
import express from 'express';
import type { LocalSolana } from '../../bin/local/solana-rpc';

export interface StockSeller {
  url: string;
  /** The seller's own wallet (payTo): outside the service. */
  wallet: string;
  /** The seller's facilitator's fee payer. */
  feePayer: string;
  /** Settlements the stock facilitator made, in order. */
  settled: { transaction: string; success: boolean }[];
  close(): Promise<void>;
}

/** Moves SOL from the chain's demo payer (a transaction that lands: a block). */
export async function fundSol(solana: LocalSolana, to: string, lamports: number): Promise<void> {
  const connection = new Connection(solana.url, 'confirmed');
  const payer = Keypair.fromSecretKey(bs58.decode(solana.demoPayer.secretKey));
  const { blockhash } = await connection.getLatestBlockhash();
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: new PublicKey(to), lamports }),
  );
  tx.sign(payer);
  await connection.sendRawTransaction(tx.serialize());
}

/** A stock seller charging `price` (`$0.01` style) for GET /weather, settling through the stock facilitator. */
export async function startStockSeller(solana: LocalSolana, price: string): Promise<StockSeller> {
  const feePayerKeys = Keypair.generate();
  const walletKeys = Keypair.generate();
  await fundSol(solana, feePayerKeys.publicKey.toBase58(), 1_000_000_000);
  solana.createTokenAccount(walletKeys.publicKey.toBase58());
  const feePayer = await createKeyPairSignerFromBytes(feePayerKeys.secretKey);
  const network = solana.network as Network;
  const stock = new x402Facilitator().register(
    network,
    new ExactSvmFacilitator(toFacilitatorSvmSigner(feePayer, { defaultRpcUrl: solana.url })),
  );
  const settled: StockSeller['settled'] = [];
  const facilitatorClient = {
    verify: (p: PaymentPayload, r: PaymentRequirements) => stock.verify(p, r),
    settle: async (p: PaymentPayload, r: PaymentRequirements) => {
      const answer = await stock.settle(p, r);
      settled.push({ transaction: answer.transaction, success: answer.success });
      return answer;
    },
    getSupported: async () => stock.getSupported() as SupportedResponse,
  };
  const server = new x402ResourceServer(facilitatorClient).register(network, new ExactSvmServer());
  const app = express();
  const wallet = walletKeys.publicKey.toBase58();
  app.use(
    paymentMiddleware(
      { 'GET /weather': { accepts: { scheme: 'exact', price, network, payTo: wallet }, description: 'a forecast' } },
      server,
    ),
  );
  app.get('/weather', (_req: unknown, res: { json(body: unknown): void }) => res.json({ forecast: 'sunny' }));
  return new Promise((resolve) => {
    const listener = app.listen(0, '127.0.0.1', () => {
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

/**
 * The README's buyer, as written there: stock `@x402/fetch` with a scheme client that asks the
 * service (`POST /api/v1/agents/x402/purchases`) for the payment. `findDefaultAsset` (@x402/svm's)
 * keeps the stock client's spend controls, which refuse a scheme client without it.
 */
export function serviceBuyer(base: string, agentKey: string, userKey: string) {
  const purchases: { id: string; status: string; paymentPayload: PaymentPayload }[] = [];
  const service = {
    scheme: 'exact',
    findDefaultAsset,
    async createPaymentPayload(x402Version: number, paymentRequirements: PaymentRequirements) {
      const res = await fetch(`${base}/api/v1/agents/x402/purchases`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-agent-key': agentKey, 'x-user-key': userKey, 'idempotency-key': randomUUID() },
        body: JSON.stringify({ x402Version, paymentRequirements }),
      });
      const purchase = (await res.json()) as { id: string; status: string; error?: string; paymentPayload: PaymentPayload };
      if (res.status !== 201) throw new Error(purchase.error ?? `purchase ${purchase.id} is ${purchase.status}`);
      purchases.push(purchase);
      return purchase.paymentPayload;
    },
  };
  const client = new x402Client().register('solana:*', service);
  return { fetch: wrapFetchWithPayment(fetch, client), purchases };
}
