/**
 * The rails, registered by (currency, rail), like x402's `register(network, scheme)`: one registry
 * the payout worker, the reconciler, withdrawals, top-ups, the audit and the local rails all look a
 * rail up in, instead of a `switch (currency)` in each. A registration says what the rail offers a
 * holder of the currency (payouts, top-ups, a deposit address, token accounts); the payout
 * implementation is attached by functions/rails/index.ts only, so that a function that never pays
 * (every API handler) reads this file and `registrations.ts` without carrying @solana/web3.js.
 * docs/rails.md "Adding a rail" walks through a new one.
 */
import { CURRENCY_INFO, type Currency, type RailName } from '../core/money';
import type { PayoutRail } from './rail';

/** What a rail offers a holder of its currency. */
export type RailOffer =
  /** Withdrawals are paid out on it (functions/rails/index.ts attaches the `PayoutRail`). */
  | 'payout'
  /** A top-up is an order the payer approves at the rail (PayPal Orders v2), settled by its webhook or the watcher. */
  | 'topUpByOrder'
  /** A top-up is a transfer to the service's deposit address, found on the chain by the watcher. */
  | 'topUpByDeposit'
  /** A payout needs the destination's token account: it is checked before a withdrawal, and may be created for a fee. */
  | 'tokenAccounts';

/** A rail's registration: the key, what it offers, and (in the paying functions) how it pays. */
export interface RailRegistration {
  readonly currency: Currency;
  readonly rail: RailName;
  /** Shown to an operator (logs, the audit's report): `Solana USDC`. */
  readonly name: string;
  readonly offers: readonly RailOffer[];
  /**
   * The payout implementation, built on first use and then kept for the container's life (its
   * connection, hot wallet and OAuth token with it). Attached by `registerPayout`.
   */
  readonly payout?: () => PayoutRail;
}

const registry = new Map<string, RailRegistration>();
const keyOf = (currency: Currency, rail: RailName) => `${currency}/${rail}`;

/** Registers a rail for a currency; registering the same (currency, rail) again is a mistake, refused. */
export function registerRail(registration: RailRegistration): void {
  const key = keyOf(registration.currency, registration.rail);
  if (registry.has(key)) throw new Error(`rail ${key} is registered twice`);
  registry.set(key, registration);
}

/** Attaches the payout implementation to a registered rail that offers payouts (functions/rails/index.ts). */
export function registerPayout(currency: Currency, rail: RailName, payout: () => PayoutRail): void {
  const registered = lookupRail(currency, rail);
  if (!registered?.offers.includes('payout')) throw new Error(`rail ${keyOf(currency, rail)} is not registered to pay out`);
  registry.set(keyOf(currency, rail), { ...registered, payout });
}

/** The registration of (currency, rail), if any. */
export function lookupRail(currency: Currency, rail: RailName): RailRegistration | undefined {
  return registry.get(keyOf(currency, rail));
}

/** Every rail registered for a currency, in registration order: what the currency offers. */
export function railsOf(currency: Currency): RailRegistration[] {
  return [...registry.values()].filter((r) => r.currency === currency);
}

/** The rail that offers `offer` for `currency`, if one does. */
export function railOffering(currency: Currency, offer: RailOffer): RailRegistration | undefined {
  return railsOf(currency).find((r) => r.offers.includes(offer));
}

/** Whether some rail of `currency` offers `offer` (a USDC withdrawal checks the token account first). */
export function offers(currency: Currency, offer: RailOffer): boolean {
  return railOffering(currency, offer) !== undefined;
}

/**
 * The payout rail for a currency: its rail's (core/money.ts `CURRENCY_INFO`). Throws when none is attached: a function that pays imports
 * functions/rails/index.ts, which attaches them.
 */
export function payoutRailFor(currency: Currency): PayoutRail {
  const registered = lookupRail(currency, CURRENCY_INFO[currency].rail);
  const payout = registered?.offers.includes('payout') ? registered.payout : undefined;
  if (!payout) throw new Error(`no payout rail is attached for ${currency} (import functions/rails/index.ts)`);
  return payout();
}
