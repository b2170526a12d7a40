/**
 * Withdrawal domain rules: which network pays which currency, the minimum amount, and what a
 * valid destination is. Pure functions, no AWS (they run before anything touches the table).
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import bs58 from 'bs58';
import * as z from 'zod';
import { type Refusal, refuse } from '../messages/refusal';
import { CURRENCY_INFO, type Currency, type RailName } from './money';

export type PayoutNetwork = 'SOL' | 'PAYPAL';

/** The network name a payout records for each rail (the stored `network` of a payout). */
const NETWORK_OF_RAIL: Readonly<Record<RailName, PayoutNetwork>> = { solana: 'SOL', paypal: 'PAYPAL' };

/** USDC is paid on Solana, USD through PayPal: each currency's network is its rail's. */
export const NETWORK_OF: Readonly<Record<Currency, PayoutNetwork>> = {
  USDC: NETWORK_OF_RAIL[CURRENCY_INFO.USDC.rail],
  USD: NETWORK_OF_RAIL[CURRENCY_INFO.USD.rail],
};

/** Smallest withdrawal, in whole currency units (spec: "Minimum 1 (1.00)"). */
export const MIN_WITHDRAWAL_UNITS = 1;

/**
 * Well-known addresses that are not wallets: native and SPL programs, sysvars, and the mints of
 * wrapped SOL and USDC. Many are valid curve points (their vanity names were chosen, not derived),
 * so the curve check lets them through; tokens paid to their associated token account could never
 * be moved by anyone.
 */
const NOT_WALLETS: ReadonlySet<string> = new Set([
  '11111111111111111111111111111111', // System Program (the all-zero key, a small-order point too)
  'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', // SPL Token
  'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb', // SPL Token-2022
  'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL', // Associated Token Account
  'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr', // SPL Memo v2
  'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo', // SPL Memo v1
  'ComputeBudget111111111111111111111111111111',
  'AddressLookupTab1e1111111111111111111111111',
  'Vote111111111111111111111111111111111111111',
  'Stake11111111111111111111111111111111111111',
  'Config1111111111111111111111111111111111111',
  'NativeLoader1111111111111111111111111111111',
  'BPFLoader1111111111111111111111111111111111',
  'BPFLoader2111111111111111111111111111111111',
  'BPFLoaderUpgradeab1e11111111111111111111111',
  'LoaderV411111111111111111111111111111111111',
  'Ed25519SigVerify111111111111111111111111111',
  'KeccakSecp256k11111111111111111111111111111',
  'Secp256r1SigVerify1111111111111111111111111',
  'Sysvar1111111111111111111111111111111111111',
  'SysvarC1ock11111111111111111111111111111111',
  'SysvarRent111111111111111111111111111111111',
  'SysvarRecentB1ockHashes11111111111111111111',
  'SysvarEpochSchedu1e111111111111111111111111',
  'SysvarFees111111111111111111111111111111111',
  'Sysvar1nstructions1111111111111111111111111',
  'SysvarS1otHashes111111111111111111111111111',
  'SysvarS1otHistory11111111111111111111111111',
  'SysvarStakeHistory1111111111111111111111111',
  'SysvarRewards111111111111111111111111111111',
  'SysvarEpochRewards1111111111111111111111111',
  'SysvarLastRestartS1ot1111111111111111111111',
  'So11111111111111111111111111111111111111112', // wrapped SOL mint
  'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', // USDC mint (mainnet)
  '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU', // USDC mint (devnet)
]);

/** Extra addresses a caller refuses besides the well-known ones (the configured mint, the hot wallet). */
export interface DestinationOptions {
  denied?: readonly (string | undefined)[];
}

/**
 * A Solana wallet address a payout can go to: base58 text of exactly 32 bytes that is a point on
 * the ed25519 curve, not of small order, and not a well-known program, sysvar or mint (nor one of
 * `denied`). The curve check is what rejects program-derived addresses such as associated token
 * accounts: an agent pasting its USDC token account instead of its wallet would otherwise have the
 * payout sent to an account nobody can sign for. Same curve test as web3.js `PublicKey.isOnCurve`.
 */
export function isSolanaWalletAddress(address: string, options: DestinationOptions = {}): boolean {
  const bytes = solanaAddressBytes(address);
  if (!bytes || !isPayableWalletKey(bytes)) return false;
  const canonical = bs58.encode(bytes);
  return !(options.denied ?? []).some((denied) => denied !== undefined && canonicalAddress(denied) === canonical);
}

/**
 * Whether 32 bytes can be a wallet's public key: on the curve, not one of the 8 small-order
 * (torsion) points, whose "private key" anyone or no one knows (the identity, the all-zero System
 * Program id), and not a well-known program, sysvar or mint.
 */
export function isPayableWalletKey(bytes: Uint8Array): boolean {
  let point: InstanceType<typeof ed25519.Point>;
  try {
    point = ed25519.Point.fromBytes(bytes);
  } catch {
    return false;
  }
  return !point.isSmallOrder() && !NOT_WALLETS.has(bs58.encode(bytes));
}

function canonicalAddress(address: string): string | undefined {
  const bytes = solanaAddressBytes(address);
  return bytes ? bs58.encode(bytes) : undefined;
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

/**
 * The refusal of a destination that the currency's network cannot pay, if any.
 * `denied`: addresses of the deployment that are not payable wallets (the configured USDC mint, the
 * hot wallet); core reads no configuration, so the caller passes them.
 */
export function destinationProblem(currency: Currency, walletAddress: string, options: DestinationOptions = {}): Refusal | undefined {
  return DESTINATION_PROBLEM[CURRENCY_INFO[currency].rail](walletAddress, options);
}

/** Each rail's destination check: a Solana wallet, or a PayPal e-mail or payer id. */
const DESTINATION_PROBLEM: Readonly<Record<RailName, (destination: string, options: DestinationOptions) => Refusal | undefined>> = {
  solana: (address, options) => (isSolanaWalletAddress(address, options) ? undefined : refuse('invalidSolanaAddress')),
  paypal: (account) => (paypalReceiverType(account) ? undefined : refuse('invalidPaypalAccount')),
};

/**
 * Where the withdraw use case learns whether a wallet can receive USDC: its associated token account
 * for the configured mint exists (functions/rails/solana.token-accounts.ts reads the chain). A
 * payout into a wallet without one cannot land, so the withdrawal is refused, or, when the agent
 * asks, the payout creates the account for the account-creation fee (docs/payouts.md).
 */
export interface TokenAccountDirectory {
  /** Throws when the network cannot tell (a RailUnavailableError): never guessed either way. */
  hasUsdcAccount(wallet: string): Promise<boolean>;
}
