/**
 * `--local` for the operator tools that read the chain (`npm run audit`, `npm run admin --
 * resolve-purchase`): the chain `npm start` keeps in .data/rails (read, never written back) behind
 * a stand-in RPC of its own, with the addresses npm start gives the service (bin/local/rails.ts).
 * The service's config module is made to read the environment again.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../local/dynamodb-local';

/** Starts it when npm start has kept a chain; resolves to how to stop it. */
export async function openLocalChain(): Promise<() => Promise<void>> {
  const stateFile = join(PROJECT_ROOT, '.data', 'rails', 'solana.json');
  if (!existsSync(stateFile)) return async () => {};
  const { startLocalSolana } = await import('../local/solana-rpc');
  const solana = await startLocalSolana({ stateFile, readOnly: true, port: 0 });
  Object.assign(process.env, {
    SOLANA_RPC_URL: solana.url,
    USDC_MINT: solana.mint,
    SOLANA_HOT_WALLET_ADDRESS: solana.hotWallet.publicKey,
    SOLANA_DEPOSIT_ADDRESS: solana.depositWallet,
    X402_PAY_TO: solana.hotWallet.publicKey,
  });
  const { resetForTests } = await import('../../functions/config');
  resetForTests();
  return () => solana.stop();
}
