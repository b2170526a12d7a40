/**
 * The payout rails' local stand-ins, started together: a LiteSVM chain behind a Solana JSON-RPC
 * shim (bin/local/solana-rpc.ts) and an imitation of the PayPal Payouts API
 * (bin/local/paypal-sandbox.ts). `env` holds exactly the variables the rails read, pointing at them.
 * Neither is the real network: see docs/rails.md for what differs. Each rail registered in
 * functions/rails/registry.ts has its stand-in here (`STAND_INS`): a rail without one is refused at
 * start, so a new rail cannot be left out of `npm start` unnoticed.
 */
import { join } from 'node:path';
import { CURRENCIES, type RailName } from '../../functions/core/money';
import { railsOf } from '../../functions/rails/registrations';
import { type PaypalSandbox, startPaypalSandbox } from './paypal-sandbox';
import { LOCAL_SIGNER_FUNCTION_NAME } from './signer';
import { type LocalSolana, startLocalSolana } from './solana-rpc';

export interface LocalRailsOptions {
  /** Keep both stand-ins' state in this directory across restarts; in memory when unset. */
  dataDir?: string;
  /** Micro-USDC in the hot wallet at first start (default 1,000,000 USDC). */
  hotWalletMicroUsdc?: bigint;
}

export interface LocalRails {
  /** SOLANA_RPC_URL, USDC_MINT, SOLANA_HOT_WALLET_SECRET, SOLANA_HOT_WALLET_ADDRESS, PAYPAL_BASE_URL, PAYPAL_CLIENT_ID, PAYPAL_CLIENT_SECRET, SOLANA_DEPOSIT_ADDRESS, PAYPAL_WEBHOOK_ID, X402_NETWORK, X402_PAY_TO. */
  env: Record<string, string>;
  solana: LocalSolana;
  paypal: PaypalSandbox;
  stop(): Promise<void>;
}

/** The local stand-in of every rail, by the rail's registered name. */
const STAND_INS: Readonly<Record<RailName, string>> = { solana: 'bin/local/solana-rpc.ts', paypal: 'bin/local/paypal-sandbox.ts' };

/** The registered rails that have no stand-in here (none, unless a rail was added without one). */
export function railsWithoutStandIn(): string[] {
  return CURRENCIES.flatMap(railsOf)
    .filter((r) => !Object.hasOwn(STAND_INS, r.rail))
    .map((r) => `${r.currency}/${r.rail}`);
}

export async function startLocalRails(opts: LocalRailsOptions = {}): Promise<LocalRails> {
  const missing = railsWithoutStandIn();
  if (missing.length > 0) throw new Error(`no local stand-in for the rails ${missing.join(', ')} (bin/local/rails.ts)`);
  const solana = await startLocalSolana({
    ...(opts.dataDir ? { stateFile: join(opts.dataDir, 'solana.json') } : {}),
    ...(opts.hotWalletMicroUsdc !== undefined ? { hotWalletMicroUsdc: opts.hotWalletMicroUsdc } : {}),
  });
  let paypal: PaypalSandbox;
  try {
    paypal = await startPaypalSandbox({
      ...(opts.dataDir
        ? { stateFile: join(opts.dataDir, 'paypal.json'), clientId: 'local-client', clientSecret: 'local-secret', webhookId: 'WH-LOCAL' }
        : {}),
    });
  } catch (error) {
    await solana.stop();
    throw error;
  }
  return {
    env: {
      SOLANA_RPC_URL: solana.url,
      USDC_MINT: solana.mint,
      SOLANA_HOT_WALLET_SECRET: solana.hotWallet.secretKey,
      SOLANA_HOT_WALLET_ADDRESS: solana.hotWallet.publicKey,
      // The functions the stack lets invoke the signer see its name; the in-process signer answers.
      SIGNER_FUNCTION_NAME: LOCAL_SIGNER_FUNCTION_NAME,
      PAYPAL_BASE_URL: paypal.url,
      PAYPAL_CLIENT_ID: paypal.clientId,
      PAYPAL_CLIENT_SECRET: paypal.clientSecret,
      // Top-ups: the deposit wallet USDC is paid to, and the webhook subscription the imitation signs for.
      SOLANA_DEPOSIT_ADDRESS: solana.depositWallet,
      PAYPAL_WEBHOOK_ID: paypal.webhookId,
      // x402 (docs/x402.md): the chain presents itself as devnet; the treasury x402 buyers pay is the
      // hot wallet (its USDC token account exists), which also pays the fees as the fee payer.
      X402_NETWORK: solana.network,
      X402_PAY_TO: solana.hotWallet.publicKey,
    },
    solana,
    paypal,
    stop: async () => {
      await Promise.all([solana.stop(), paypal.stop()]);
    },
  };
}
