/**
 * The rail for a currency: USDC → Solana, USD → PayPal. Each rail is built on first use and then
 * kept for the container's life (its connection, hot wallet and OAuth token with it).
 * Import this only from the functions that pay (payout worker, reconciler): the Solana rail pulls
 * in @solana/web3.js and @solana/spl-token, which no API handler should carry.
 */
import { ResourceNotFoundException } from '@aws-sdk/client-secrets-manager';
import { config, onConfigReset } from '../config';
import type { Currency } from '../core/money';
import { readSecretString } from '../store/secrets';
import { RailConfigError } from './errors';
import { PaypalRail } from './paypal.rail';
import type { PayoutRail } from './rail';
import { SolanaRail } from './solana.rail';

let solana: PayoutRail | undefined;
let paypal: PayoutRail | undefined;

export function railFor(currency: Currency): PayoutRail {
  switch (currency) {
    case 'USDC': {
      const rpcUrlSecretArn = config().SOLANA_RPC_URL_SECRET_ARN;
      solana ??= rpcUrlSecretArn ? solanaRailFromSecretUrl(rpcUrlSecretArn) : new SolanaRail();
      return solana;
    }
    case 'USD':
      paypal ??= new PaypalRail();
      return paypal;
  }
}

/**
 * On AWS the RPC URL is a secret (a provider URL usually carries its API key): it is read on the
 * first payout, like the hot wallet, and the Solana rail is built with it then. A read that fails
 * is retried on the next payout; an empty secret (never put) is the operator's to fix.
 */
function solanaRailFromSecretUrl(secretArn: string): PayoutRail {
  let rail: Promise<PayoutRail> | undefined;
  const build = async (): Promise<PayoutRail> => {
    let url: string;
    try {
      url = (await readSecretString(secretArn)).trim();
    } catch (error) {
      if (error instanceof ResourceNotFoundException) {
        throw new RailConfigError('SOLANA_RPC_URL_SECRET_ARN has no value: put the RPC URL (docs/deploy.md)', { cause: error });
      }
      throw error;
    }
    if (!URL.canParse(url)) throw new RailConfigError('SOLANA_RPC_URL_SECRET_ARN does not hold a URL');
    return new SolanaRail({ rpcUrl: url });
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
