/**
 * `npm run x402-seller`: an x402 seller that is not this service, for the README's "Buy from x402
 * sellers" against `npm start`. The stock `@x402/express` middleware with the stock `@x402/svm`
 * facilitator (its own fee payer) on npm start's local chain, selling GET /weather and paying a
 * wallet of its own (bin/local/stock-seller.ts). It reads the chain from the demo payer file npm
 * start writes (.data/demo-payer.json; with IN_MEMORY=1 pass DEMO_PAYER=<file> from its banner),
 * whose keypair funds the seller's fee payer with SOL.
 *
 *   npm run x402-seller                         # http://127.0.0.1:4022/weather for $0.01
 *   SELLER_PORT=4023 PRICE='$0.05' npm run x402-seller
 */
import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Connection, PublicKey } from '@solana/web3.js';
import { readDemoPayerFile } from './local/demo';
import { startStockSeller } from './local/stock-seller';

async function main(): Promise<void> {
  const port = Number(process.env.SELLER_PORT ?? 4022);
  const price = process.env.PRICE ?? '$0.01';
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`SELLER_PORT must be a port number, got ${process.env.SELLER_PORT}`);
  const { file, payer } = readDemoPayerFile();
  const connection = new Connection(payer.rpcUrl, 'confirmed');
  let genesis: string;
  try {
    genesis = await connection.getGenesisHash();
  } catch {
    throw new Error(
      `the local chain at ${payer.rpcUrl} (from ${file}) does not answer. Is npm start running? With IN_MEMORY=1, pass the ` +
        'file on its "demo payer" line as DEMO_PAYER=<file>.',
    );
  }
  // CAIP-2, as x402 names Solana networks: the genesis hash's first 32 characters.
  const network = `solana:${genesis.slice(0, 32)}`;
  const usdc = (wallet: string) =>
    connection.getTokenAccountBalance(getAssociatedTokenAddressSync(new PublicKey(payer.usdcMint), new PublicKey(wallet))).then(
      ({ value }) => value.uiAmountString ?? value.amount,
      () => '?',
    );
  const seller = await startStockSeller({ url: payer.rpcUrl, network, mint: payer.usdcMint, funderSecretKey: payer.secretKey }, price, {
    port,
    onSettled: (s) => {
      if (!s.success) return console.log(`settlement refused: ${s.errorReason ?? 'unknown'}`);
      void usdc(seller.wallet).then((balance) => console.log(`settled ${s.transaction}: the seller's wallet holds ${balance} USDC`));
    },
  });
  console.log(`x402 seller (stock @x402/express + stock @x402/svm facilitator) on ${network}

  resource    ${seller.url}/weather   (${price} USDC, scheme exact)
  pays to     ${seller.wallet}   (a wallet outside the service)
  fee payer   ${seller.feePayer}   (the seller's facilitator's own)

Buy it with docs/examples/purchase.mjs (README "Buy from x402 sellers"): URL=${seller.url}/weather. Ctrl-C stops it.`);
  const stop = () => void seller.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
