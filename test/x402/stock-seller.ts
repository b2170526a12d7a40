/**
 * The stock x402 seller (bin/local/stock-seller.ts: `@x402/express` with the stock `@x402/svm`
 * facilitator, its own fee payer, paying a wallet outside the service) on the test stack's chain,
 * and the README's buyer: stock `@x402/fetch` with a scheme client of a few lines that asks the
 * service for the payment.
 */
import { randomUUID } from 'node:crypto';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { findDefaultAsset } from '@x402/svm';
import type { LocalSolana } from '../../bin/local/solana-rpc';
import { fundSol as fundSolFrom, type StockSeller, startStockSeller as startSeller } from '../../bin/local/stock-seller';

export type { StockSeller };

/** Moves SOL from the chain's demo payer (a transaction that lands: a block). */
export const fundSol = (solana: LocalSolana, to: string, lamports: number): Promise<void> =>
  fundSolFrom(solana.url, solana.demoPayer.secretKey, to, lamports);

/** A stock seller charging `price` (`$0.01` style) for GET /weather, settling through the stock facilitator. */
export const startStockSeller = (solana: LocalSolana, price: string): Promise<StockSeller> =>
  startSeller({ url: solana.url, network: solana.network, mint: solana.mint, funderSecretKey: solana.demoPayer.secretKey }, price);

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
