/**
 * Solana addresses computed without the Solana SDK (§9): a wallet's associated token account
 * (ATA), the address Solana Pay pays into and the payout rail pays to. Shared by the top-up
 * watcher and the withdraw route, which read the chain over plain JSON-RPC.
 */
import { createHash } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import bs58 from 'bs58';

/** SPL Token, the program that owns USDC's mint on mainnet and devnet. */
export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
/** SPL Token-2022, the other program a mint may belong to (the payout rail pays both). */
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
export const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';

/**
 * `owner`'s associated token account for `mint` under `tokenProgram` (SPL Token by default): the
 * program address of [owner, token program, mint] under the ATA program — the first bump, from
 * 255 down, whose hash is off the ed25519 curve (web3.js `findProgramAddressSync`).
 */
export function associatedTokenAddress(owner: string, mint: string, tokenProgram: string = TOKEN_PROGRAM): string {
  const seeds = [bs58.decode(owner), bs58.decode(tokenProgram), bs58.decode(mint)];
  const program = bs58.decode(ASSOCIATED_TOKEN_PROGRAM);
  for (let bump = 255; bump >= 0; bump--) {
    const hash = createHash('sha256');
    for (const seed of seeds) hash.update(seed);
    hash.update(Uint8Array.of(bump)).update(program).update('ProgramDerivedAddress');
    const candidate = hash.digest();
    if (!onCurve(candidate)) return bs58.encode(candidate);
  }
  throw new Error('no program address found');
}

function onCurve(bytes: Uint8Array): boolean {
  try {
    // zip215: the permissive decoding web3.js's isOnCurve uses, or some addresses would differ.
    ed25519.Point.fromBytes(bytes, true);
    return true;
  } catch {
    return false;
  }
}
