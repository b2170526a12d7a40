/**
 * How a Solana rail is built: where it connects, who signs, how long it waits, and its fee policy
 * (docs/rails.md), checked against the same bounds as the configuration's so that a rail built by
 * hand (a test, the local stack) cannot sign a transaction the configuration would refuse.
 */
import { MAX_SOLANA_COMPUTE_UNIT_LIMIT, MAX_SOLANA_PRIORITY_FEE_MICROLAMPORTS, MIN_SOLANA_COMPUTE_UNIT_LIMIT } from '../config';
import { RailConfigError } from './errors';
import type { HotWalletSigner } from './hot-wallet-signer';
import type { SolanaCommitment } from './solana.connection';

export interface SolanaRailOptions {
  /** Defaults: SOLANA_RPC_URL, USDC_MINT, SOLANA_COMMITMENT from the config module. */
  rpcUrl?: string;
  mint?: string;
  commitment?: SolanaCommitment;
  /** Who signs as the hot wallet; default the hot-wallet signer (the signer function on AWS, in-process locally). */
  signer?: HotWalletSigner;
  /** How long one call waits for its transaction to reach `commitment` before answering 'pending'. */
  confirmTimeoutMs?: number;
  pollIntervalMs?: number;
  /** Per RPC request. A hung node is a transient error, not a hung worker. */
  rpcTimeoutMs?: number;
  /** Priority fee, micro-lamports per compute unit; default SOLANA_PRIORITY_FEE_MICROLAMPORTS. */
  priorityFeeMicroLamports?: number;
  /** Compute units each payout transaction requests; default SOLANA_COMPUTE_UNIT_LIMIT. */
  computeUnitLimit?: number;
}

/** A RailConfigError when the priority fee or the compute-unit limit is out of the configuration's bounds. */
export function checkFeeBounds(options: SolanaRailOptions): void {
  const { priorityFeeMicroLamports: price, computeUnitLimit: limit } = options;
  if (price !== undefined && !inRange(price, 0, MAX_SOLANA_PRIORITY_FEE_MICROLAMPORTS)) {
    throw new RailConfigError(`priority fee must be a whole number of micro-lamports from 0 to ${MAX_SOLANA_PRIORITY_FEE_MICROLAMPORTS}`);
  }
  if (limit !== undefined && !inRange(limit, MIN_SOLANA_COMPUTE_UNIT_LIMIT, MAX_SOLANA_COMPUTE_UNIT_LIMIT)) {
    throw new RailConfigError(
      `compute unit limit must be a whole number from ${MIN_SOLANA_COMPUTE_UNIT_LIMIT} to ${MAX_SOLANA_COMPUTE_UNIT_LIMIT}`,
    );
  }
}

function inRange(n: number, min: number, max: number): boolean {
  return Number.isSafeInteger(n) && n >= min && n <= max;
}
