/**
 * Pays a USDC top-up's `solanaPayUrl` with the local demo payer (a keypair funded with SOL and
 * test USDC on the local LiteSVM node), which `npm start` writes to .data/demo-payer.json, or with
 * IN_MEMORY=1 to a temporary folder it prints (pass it as DEMO_PAYER):
 *
 *   npx tsx bin/pay-topup.ts '<solanaPayUrl>' 25
 *   DEMO_PAYER=/tmp/agent-payments-demo-XXXX/demo-payer.json npx tsx bin/pay-topup.ts '<solanaPayUrl>' 25
 *
 * Any Solana Pay wallet does the same against a real cluster. The watcher credits it within a
 * few seconds of the transfer (once finalized).
 */
import { readDemoPayerFile } from './local/demo';
import { payTransferRequest } from './local/solana-pay';

async function main(): Promise<void> {
  const [url, amount] = process.argv.slice(2);
  if (!url || !amount) {
    console.error("usage: npx tsx bin/pay-topup.ts '<solanaPayUrl>' <amount>");
    process.exit(2);
  }
  const { file, payer } = readDemoPayerFile();
  let signature: string;
  try {
    signature = await payTransferRequest({ rpcUrl: payer.rpcUrl, payerSecret: payer.secretKey, solanaPayUrl: url, amount });
  } catch (error) {
    // A file left by an earlier npm start names that start's chain, which is gone.
    if (refused(error)) {
      throw new Error(
        `the local chain at ${payer.rpcUrl} (from ${file}) does not answer. Is npm start running? With IN_MEMORY=1, pass the ` +
          'file on its "demo payer" line as DEMO_PAYER=<file>.',
      );
    }
    throw error;
  }
  console.log(`sent ${amount} USDC: ${signature}`);
}

/** Nothing listens where the RPC URL points (fetch's own error, or web3.js's wrapping of it). */
function refused(error: unknown): boolean {
  const text = (e: unknown): string =>
    e instanceof Error ? `${e.message} ${(e as { code?: unknown }).code ?? ''} ${e.cause === undefined ? '' : text(e.cause)}` : String(e);
  return /ECONNREFUSED|fetch failed/.test(text(error));
}

main().catch((error: unknown) => {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
