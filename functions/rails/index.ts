/**
 * The rail for a currency: USDC → Solana, USD → PayPal. Each rail is built on first use and then
 * kept for the container's life (its connection, hot wallet and OAuth token with it).
 * Import this only from the functions that pay (payout worker, reconciler): the Solana rail pulls
 * in @solana/web3.js and @solana/spl-token, which no API handler should carry.
 */
import { onConfigReset } from '../config';
import type { Currency } from '../core/money';
import { PaypalRail } from './paypal.rail';
import type { PayoutRail } from './rail';
import { SolanaRail } from './solana.rail';

let solana: PayoutRail | undefined;
let paypal: PayoutRail | undefined;

export function railFor(currency: Currency): PayoutRail {
  switch (currency) {
    case 'USDC':
      solana ??= new SolanaRail();
      return solana;
    case 'USD':
      paypal ??= new PaypalRail();
      return paypal;
  }
}

/** Forgets the built rails, so the next `railFor` reads the configuration again (local runs, tests). */
function resetRails(): void {
  solana = undefined;
  paypal = undefined;
}
onConfigReset(resetRails);

export type { PayoutInstruction, PayoutRail, RailCheckpoint, RailOutcome, RailState } from './rail';
