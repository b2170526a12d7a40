/**
 * The payout rails, attached to their registrations (registrations.ts, by (currency, rail)): the
 * Solana rail pays USDC, the PayPal rail USD. Each rail is built on first use and then kept for the
 * container's life (its connection, hot wallet and OAuth token with it).
 * Import this only from the functions that pay (payout worker, reconciler): the Solana rail pulls
 * in @solana/web3.js and @solana/spl-token, which no API handler should carry.
 */
import { config, onConfigReset } from '../config';
import type { Currency } from '../core/money';
import { RailConfigError } from './errors';
import { PaypalRail } from './paypal.rail';
import type { PayoutRail } from './rail';
import { readRailSecret } from './rail-secret';
import { payoutRailFor } from './registrations';
import { registerPayout } from './registry';
import { SolanaRail, type SolanaRailOptions } from './solana.rail';

/** The Solana rail: built at once with a given RPC URL, or on first use from the URL's secret (below). */
let solana: { rail: PayoutRail; built: () => Promise<SolanaRail> } | undefined;
let paypal: PayoutRail | undefined;

registerPayout('USDC', 'solana', () => {
  solana ??= solanaRail();
  return solana.rail;
});
registerPayout('USD', 'paypal', () => {
  paypal ??= new PaypalRail();
  return paypal;
});

/** The payout rail for a currency: the registry's (registry.ts), looked up by the currency's rail. */
export function railFor(currency: Currency): PayoutRail {
  return payoutRailFor(currency);
}

/** The fee policy (docs/rails.md): the compute-unit price, capped by the config schema, and limit. */
function solanaFees(): SolanaRailOptions {
  const { SOLANA_PRIORITY_FEE_MICROLAMPORTS, SOLANA_COMPUTE_UNIT_LIMIT } = config();
  return { priorityFeeMicroLamports: SOLANA_PRIORITY_FEE_MICROLAMPORTS, computeUnitLimit: SOLANA_COMPUTE_UNIT_LIMIT };
}

/**
 * The Solana rail. On AWS the RPC URL is a secret (a provider URL usually carries its API key): it
 * is read on first use, like the hot wallet's address, and the rail is built with it then. A read
 * that fails is retried on the next use; an empty secret (never put) is a RailConfigError, the
 * operator's to fix.
 */
function solanaRail(): { rail: PayoutRail; built: () => Promise<SolanaRail> } {
  const secretArn = config().SOLANA_RPC_URL_SECRET_ARN;
  if (!secretArn) {
    const rail = new SolanaRail(solanaFees());
    return { rail, built: () => Promise.resolve(rail) };
  }
  let building: Promise<SolanaRail> | undefined;
  const built = () => {
    building ??= (async () => {
      const url = (await readRailSecret('SOLANA_RPC_URL_SECRET_ARN', secretArn)).trim();
      if (!URL.canParse(url)) throw new RailConfigError('SOLANA_RPC_URL_SECRET_ARN does not hold a URL');
      return new SolanaRail({ rpcUrl: url, ...solanaFees() });
    })().catch((error: unknown) => {
      building = undefined;
      throw error;
    });
    return building;
  };
  return { rail: { pay: (instruction, checkpoint) => built().then((rail) => rail.pay(instruction, checkpoint)) }, built };
}

/**
 * The hot wallet's SOL, in lamports: it pays every USDC payout's fee (and x402's, when that is on),
 * so the reconciler reads it on every run for the HotWalletSolLow alarm.
 */
export async function hotWalletLamports(): Promise<number> {
  solana ??= solanaRail();
  return (await solana.built()).hotWalletLamports();
}

/** Forgets the built rails, so the next `railFor` reads the configuration again (local runs, tests). */
function resetRails(): void {
  solana = undefined;
  paypal = undefined;
}
onConfigReset(resetRails);

export type { PayoutInstruction, PayoutRail, RailCheckpoint, RailOutcome, RailState } from './rail';
