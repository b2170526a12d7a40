/**
 * The rails this service has, registered by (currency, rail): what each offers, no implementation
 * (functions/rails/index.ts attaches the payout ones). Importing this file registers them; it is
 * light on purpose: withdrawals, top-ups and the audit read it from API handlers.
 */
import { registerRail } from './registry';

registerRail({
  currency: 'USDC',
  rail: 'solana',
  name: 'Solana USDC',
  offers: ['payout', 'topUpByDeposit', 'tokenAccounts'],
});

registerRail({
  currency: 'USD',
  rail: 'paypal',
  name: 'PayPal USD',
  offers: ['payout', 'topUpByOrder'],
});

export { lookupRail, offers, payoutRailFor, railOffering, railsOf } from './registry';
