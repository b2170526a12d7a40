/**
 * The rail for a currency: USDC → Solana, USD → PayPal. Each rail is built on first use and then
 * kept for the container's life (its connection, hot wallet and OAuth token with it).
 * Import this only from the functions that pay (payout worker, reconciler): the Solana rail pulls
 * in @solana/web3.js and @solana/spl-token, which no API handler should carry.
 */
import { config, onConfigReset } from '../config';
import type { Currency } from '../core/money';
import { RailConfigError } from './errors';
import { PaypalRail } from './paypal.rail';
import type { PayoutRail } from './rail';
import { readRailSecret } from './rail-secret';
import { SolanaRail, type SolanaRailOptions } from './solana.rail';

let solana: PayoutRail | undefined;
let paypal: PayoutRail | undefined;

export function railFor(currency: Currency): PayoutRail {
  switch (currency) {
    case 'USDC': {
      const rpcUrlSecretArn = config().SOLANA_RPC_URL_SECRET_ARN;
      solana ??= rpcUrlSecretArn ? solanaRailFromSecretUrl(rpcUrlSecretArn) : new SolanaRail(solanaFees());
      return solana;
    }
    case 'USD':
      paypal ??= new PaypalRail();
      return paypal;
  }
}

/** The fee policy (docs/rails.md): the compute-unit price, capped by the config schema, and limit. */
function solanaFees(): SolanaRailOptions {
  const { SOLANA_PRIORITY_FEE_MICROLAMPORTS, SOLANA_COMPUTE_UNIT_LIMIT } = config();
  return { priorityFeeMicroLamports: SOLANA_PRIORITY_FEE_MICROLAMPORTS, computeUnitLimit: SOLANA_COMPUTE_UNIT_LIMIT };
}

/**
 * On AWS the RPC URL is a secret (a provider URL usually carries its API key): it is read on the
 * first payout, like the hot wallet, and the Solana rail is built with it then. A read that fails
 * is retried on the next payout; an empty secret (never put) is a RailConfigError, the operator's to fix.
 */
function solanaRailFromSecretUrl(secretArn: string): PayoutRail {
  let rail: Promise<PayoutRail> | undefined;
  const build = async (): Promise<PayoutRail> => {
    const url = (await readRailSecret('SOLANA_RPC_URL_SECRET_ARN', secretArn)).trim();
    if (!URL.canParse(url)) throw new RailConfigError('SOLANA_RPC_URL_SECRET_ARN does not hold a URL');
    return new SolanaRail({ rpcUrl: url, ...solanaFees() });
  };
  return {
    pay(instruction, checkpoint) {
      rail ??= build().catch((error: unknown) => {
        rail = undefined;
        throw error;
      });
      return rail.then((built) => built.pay(instruction, checkpoint));
    },
  };
}

/** Forgets the built rails, so the next `railFor` reads the configuration again (local runs, tests). */
function resetRails(): void {
  solana = undefined;
  paypal = undefined;
}
onConfigReset(resetRails);

export type { PayoutInstruction, PayoutRail, RailCheckpoint, RailOutcome, RailState } from './rail';
