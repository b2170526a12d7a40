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
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { payTransferRequest } from './local/solana-pay';

async function main(): Promise<void> {
  const [url, amount] = process.argv.slice(2);
  if (!url || !amount) {
    console.error("usage: npx tsx bin/pay-topup.ts '<solanaPayUrl>' <amount>");
    process.exit(2);
  }
  const file = process.env.DEMO_PAYER ?? join(__dirname, '..', '.data', 'demo-payer.json');
  const payer = JSON.parse(readFileSync(file, 'utf8')) as { secretKey: string; rpcUrl: string };
  const signature = await payTransferRequest({ rpcUrl: payer.rpcUrl, payerSecret: payer.secretKey, solanaPayUrl: url, amount });
  console.log(`sent ${amount} USDC: ${signature}`);
}

main().catch((error: unknown) => {
  console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
