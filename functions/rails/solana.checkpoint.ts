/**
 * The Solana rail's saved state: what is written through the payout's checkpoint before a
 * transaction's bytes leave the process (solana.rail.ts, "the one rule"), and how it is read back.
 * A saved state that does not parse, or whose transaction does not carry its signature, is a
 * CheckpointError: never guessed past.
 */
import { Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import * as z from 'zod';
import { CheckpointError } from './errors';
import type { RailState } from './rail';

/** What is saved before a transaction is sent. `tx` is the signed transaction, base64. */
const savedSchema = z.object({
  rail: z.literal('solana'),
  signature: z.string().min(64).max(88),
  lastValidBlockHeight: z.number().int().nonnegative(),
  tx: z.string().min(1),
  attempt: z.number().int().positive(),
});
export type SolanaCheckpoint = z.infer<typeof savedSchema>;

export function readCheckpoint(saved: RailState | undefined): SolanaCheckpoint | undefined {
  if (saved === undefined) return undefined;
  const parsed = savedSchema.safeParse(saved);
  if (!parsed.success) throw new CheckpointError('saved rail state is not a Solana checkpoint');
  let tx: Transaction;
  try {
    tx = Transaction.from(Buffer.from(parsed.data.tx, 'base64'));
  } catch {
    throw new CheckpointError('saved Solana transaction cannot be decoded');
  }
  if (!tx.signature || bs58.encode(tx.signature) !== parsed.data.signature) {
    throw new CheckpointError('saved Solana transaction does not carry the saved signature');
  }
  return parsed.data;
}
