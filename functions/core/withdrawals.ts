/**
 * Withdrawal domain rules: which network pays which currency, the minimum amount, and what a
 * valid destination is. Pure functions, no AWS (they run before anything touches the table).
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import bs58 from 'bs58';
import * as z from 'zod';
import type { Currency } from './money';

export type PayoutNetwork = 'SOL' | 'PAYPAL';

/** USDC is paid on Solana, USD through PayPal. */
export const NETWORK_OF: Readonly<Record<Currency, PayoutNetwork>> = { USDC: 'SOL', USD: 'PAYPAL' };

/** Smallest withdrawal, in whole currency units (spec: "Minimum 1 (1.00)"). */
export const MIN_WITHDRAWAL_UNITS = 1;

/**
 * A Solana wallet address: base58 text of exactly 32 bytes that is a point on the ed25519 curve.
 * The curve check is what rejects program-derived addresses such as associated token accounts:
 * an agent pasting its USDC token account instead of its wallet would otherwise have the
 * payout sent to an account nobody can sign for. Same test as web3.js `PublicKey.isOnCurve`.
 */
export function isSolanaWalletAddress(address: string): boolean {
  const bytes = solanaAddressBytes(address);
  return bytes !== undefined && isOnEd25519Curve(bytes);
}

/** The 32 bytes a base58 Solana address stands for, or undefined when it is not one. */
export function solanaAddressBytes(address: string): Uint8Array | undefined {
  // 32 bytes are 32 to 44 base58 characters; anything else is not worth decoding.
  if (address.length < 32 || address.length > 44) return undefined;
  let bytes: Uint8Array;
  try {
    bytes = bs58.decode(address);
  } catch {
    return undefined;
  }
  return bytes.length === 32 ? bytes : undefined;
}

/** Whether 32 bytes are a point on the ed25519 curve (a wallet, not a program-derived address). */
export function isOnEd25519Curve(bytes: Uint8Array): boolean {
  try {
    ed25519.Point.fromBytes(bytes);
    return true;
  } catch {
    return false;
  }
}

/** PayPal payer id: 13 upper-case letters and digits (PayPal's "PAYPAL_ID" receiver type). */
const PAYPAL_PAYER_ID = /^[A-Z0-9]{13}$/;
/** The Payouts API limits a receiver to 127 characters. */
const PAYPAL_RECEIVER_MAX = 127;
const emailSchema = z.email();

export type PaypalReceiverType = 'EMAIL' | 'PAYPAL_ID';

/**
 * How PayPal must be told to read `account`, or undefined when it is neither an e-mail nor a payer id.
 * The one definition of a PayPal receiver: the withdraw request is validated with it and the PayPal
 * rail types the receiver with it, so the rail never refuses a destination the request accepted.
 */
export function paypalReceiverType(account: string): PaypalReceiverType | undefined {
  if (PAYPAL_PAYER_ID.test(account)) return 'PAYPAL_ID';
  if (account.length <= PAYPAL_RECEIVER_MAX && emailSchema.safeParse(account).success) return 'EMAIL';
  return undefined;
}

/** The public error message for a destination that the currency's network cannot pay, if any. */
export function destinationProblem(currency: Currency, walletAddress: string): string | undefined {
  if (currency === 'USDC') return isSolanaWalletAddress(walletAddress) ? undefined : 'invalid solana address';
  return paypalReceiverType(walletAddress) ? undefined : 'invalid paypal account';
}
