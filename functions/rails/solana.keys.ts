/**
 * What a Solana USDC payout is made of, apart from the protocol that sends it (solana.rail.ts):
 * its constants (decimals, the memo program, the creation's compute units), the destination and
 * secret-key readers, and the instructions of one payout transaction. The hot-wallet signer checks
 * a message against the same constants (functions/signer/payout-message.ts).
 */
import { createAssociatedTokenAccountIdempotentInstruction, createTransferCheckedInstruction, unpackAccount } from '@solana/spl-token';
import { ComputeBudgetProgram, Keypair, PublicKey, TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import * as z from 'zod';
import { CURRENCY_INFO } from '../core/money';
import { isPayableWalletKey, solanaAddressBytes } from '../core/withdrawals';
import { PAYOUT_FAILURE_REASONS } from '../messages/problems';
import { RailConfigError } from './errors';

export const USDC_DECIMALS = CURRENCY_INFO.USDC.decimals;
/** SPL Memo v2. Its instruction with no accounts just records the text in the transaction. */
export const MEMO_PROGRAM_ID = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
/** What a payout to a wallet without a USDC token account answers (the agent reads it): the withdraw
 * API refuses such a wallet up front, so this is an account closed after the withdrawal was accepted. */
export const NO_TOKEN_ACCOUNT = PAYOUT_FAILURE_REASONS.noTokenAccount;
/** Compute units added to the limit of a transaction that creates the destination's token account:
 * the ATA program's create (system account creation, token account initialisation) is reported at
 * ~20,000-30,000 units with the classic programs on mainnet, far above the transfer's (docs/rails.md). */
export const TOKEN_ACCOUNT_CREATION_COMPUTE_UNITS = 40_000;

/** What the priority fee of one transaction costs: limit × price micro-lamports, rounded up to whole
 * lamports as the runtime charges it (on the requested limit, not on the units used). */
export function priorityFeeLamports(computeUnitLimit: number, microLamportsPerUnit: number): number {
  return Number((BigInt(computeUnitLimit) * BigInt(microLamportsPerUnit) + 999_999n) / 1_000_000n);
}

/** The accounts and amounts of one payout transaction. */
export interface PayoutTransfer {
  payoutId: string;
  hotWallet: PublicKey;
  hotAta: PublicKey;
  mint: PublicKey;
  tokenProgram: PublicKey;
  owner: PublicKey;
  destinationAta: PublicKey;
  netAmount: number;
  /** The payout paid the account-creation fee: the destination's token account is created if missing. */
  create: boolean;
  computeUnitLimit: number;
  priorityFeeMicroLamports: number;
}

/** The instructions of a payout, in order: compute budget, memo, the optional create, the transfer. */
export function payoutInstructions(t: PayoutTransfer): TransactionInstruction[] {
  return [
    // First, and inside the signed bytes the rail saves: a re-send pays the fee that was signed.
    ComputeBudgetProgram.setComputeUnitLimit({ units: t.computeUnitLimit }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: t.priorityFeeMicroLamports }),
    new TransactionInstruction({ programId: MEMO_PROGRAM_ID, keys: [], data: Buffer.from(`payout:${t.payoutId}`, 'utf8') }),
    // Paid for by the agent (createTokenAccount): creates the account, or does nothing if it exists.
    ...(t.create
      ? [createAssociatedTokenAccountIdempotentInstruction(t.hotWallet, t.destinationAta, t.owner, t.mint, t.tokenProgram)]
      : []),
    createTransferCheckedInstruction(
      t.hotAta,
      t.mint,
      t.destinationAta,
      t.hotWallet,
      BigInt(t.netAmount),
      USDC_DECIMALS,
      [],
      t.tokenProgram,
    ),
  ];
}

/** A token account's state, or undefined when the account holds something else. */
export function tryUnpackAccount(address: PublicKey, info: Parameters<typeof unpackAccount>[1], program: PublicKey) {
  try {
    return unpackAccount(address, info, program);
  } catch {
    return undefined;
  }
}

/**
 * A wallet address a payout may go to: base58 of 32 bytes and, unless `wallet` is false, a key a
 * wallet can hold (on the ed25519 curve, not of small order, not a well-known program or sysvar):
 * tokens sent to any other address's "ATA" could never be spent. `wallet: false` reads any address
 * (the mint).
 */
export function walletAddress(text: string, wallet = true): PublicKey | undefined {
  // One definition of a valid destination, shared with the withdraw API (functions/core).
  const bytes = solanaAddressBytes(text);
  if (!bytes || (wallet && !isPayableWalletKey(bytes))) return undefined;
  return new PublicKey(bytes);
}

/** A 64-byte secret key given as base58 or as a JSON byte array (the Solana CLI's key file format). */
export function parseSecretKey(text: string): Keypair {
  const trimmed = text.trim();
  let bytes: Uint8Array;
  try {
    if (trimmed.startsWith('[')) {
      const parsed = z.array(z.number().int().min(0).max(255)).safeParse(JSON.parse(trimmed));
      if (!parsed.success) throw new Error('not a byte array');
      bytes = Uint8Array.from(parsed.data);
    } else {
      bytes = bs58.decode(trimmed);
    }
  } catch {
    // Never echo the input or a parser message quoting it: it is the hot wallet's key.
    throw new RailConfigError('hot wallet secret is neither base58 nor a JSON byte array');
  }
  if (bytes.length !== 64) throw new RailConfigError(`hot wallet secret must be 64 bytes, got ${bytes.length}`);
  try {
    return Keypair.fromSecretKey(bytes);
  } catch {
    throw new RailConfigError('hot wallet secret is not a valid ed25519 key pair');
  }
}
