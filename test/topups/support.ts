/**
 * Helpers for the top-up suites: open top-ups over HTTP, pay them with real signed transfers on
 * the local LiteSVM node (the demo payer), run the watcher in-process, read balances.
 */
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  getAssociatedTokenAddressSync,
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import { Connection, Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { payTransferRequest } from '../../bin/local/solana-pay';
import { meBody } from '../../functions/contracts/responses/accounts';
import { expectBody } from '../support/bodies';
import type { TestStack } from '../support/stack';

export interface TopupBody {
  id: string;
  currency: 'USD' | 'USDC';
  status: 'PENDING' | 'COMPLETED' | 'EXPIRED';
  amount: number | null;
  externalId: string | null;
  solanaPayUrl?: string;
  reference?: string;
  address?: string;
  approveUrl?: string;
  expiresAt: string;
  error?: string;
}

export async function openTopup(t: TestStack, userKey: string, body: Record<string, unknown> | string) {
  return t.call<TopupBody>('POST', '/api/v1/users/me/topups', {
    headers: { 'x-user-key': userKey },
    ...(typeof body === 'string' ? { raw: body } : { body }),
  });
}

export async function getTopup(t: TestStack, userKey: string, id: string) {
  return t.call<TopupBody>('GET', `/api/v1/users/me/topups/${id}`, { headers: { 'x-user-key': userKey } });
}

export async function balances(t: TestStack, userKey: string): Promise<{ USD: number; USDC: number }> {
  return expectBody(await t.call('GET', '/api/v1/users/me', { headers: { 'x-user-key': userKey } }), meBody, 200).balances;
}

/** Pays a Solana Pay URL with the demo payer: a real signed SPL transfer on the local node. */
export function pay(t: TestStack, solanaPayUrl: string, amount: string, opts: { mintOverride?: string; withoutReference?: boolean } = {}) {
  const { solana } = t.stack.rails;
  return payTransferRequest({ rpcUrl: solana.url, payerSecret: solana.demoPayer.secretKey, solanaPayUrl, amount, ...opts });
}

/** A second token (not the configured USDC mint), minted to the demo payer: for the wrong-mint path. */
export async function otherMint(t: TestStack): Promise<string> {
  const { solana } = t.stack.rails;
  const connection = new Connection(solana.url, 'confirmed');
  const payer = Keypair.fromSecretKey(bs58.decode(solana.demoPayer.secretKey));
  const mint = Keypair.generate();
  const rent = await connection.getMinimumBalanceForRentExemption(MINT_SIZE);
  const ata = getAssociatedTokenAddressSync(mint.publicKey, payer.publicKey);
  const { blockhash } = await connection.getLatestBlockhash();
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
    SystemProgram.createAccount({
      fromPubkey: payer.publicKey,
      newAccountPubkey: mint.publicKey,
      lamports: rent,
      space: MINT_SIZE,
      programId: TOKEN_PROGRAM_ID,
    }),
    createInitializeMint2Instruction(mint.publicKey, 6, payer.publicKey, null),
    createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, ata, payer.publicKey, mint.publicKey),
    createMintToInstruction(mint.publicKey, ata, payer.publicKey, 1_000_000_000n),
  );
  tx.sign(payer, mint);
  await connection.sendRawTransaction(tx.serialize());
  return mint.publicKey.toBase58();
}

/**
 * `n` cheap transactions that carry `reference` (a read-only account, as a Solana Pay payment
 * does) but pay the deposit wallet nothing: a lamport from the demo payer to itself. Anyone who
 * sees a top-up's public reference can send these.
 */
let spamCount = 0;
export async function spamReference(t: TestStack, reference: string, n: number): Promise<string[]> {
  const { solana } = t.stack.rails;
  const connection = new Connection(solana.url, 'confirmed');
  const payer = Keypair.fromSecretKey(bs58.decode(solana.demoPayer.secretKey));
  const signatures: string[] = [];
  for (let i = 0; i < n; i++) {
    const { blockhash } = await connection.getLatestBlockhash();
    // A different lamport count each time: the same transaction twice would be one signature.
    const ix = SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: payer.publicKey, lamports: ++spamCount });
    ix.keys.push({ pubkey: new PublicKey(reference), isSigner: false, isWritable: false });
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(ix);
    tx.sign(payer);
    signatures.push(await connection.sendRawTransaction(tx.serialize()));
  }
  return signatures;
}

// Lives in test/support (the x402 suite counts the same lines); re-exported for the top-up suites.
export { errorLines } from '../support/log-lines';
