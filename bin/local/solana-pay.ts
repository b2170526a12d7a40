/**
 * Pays a Solana Pay transfer request the way a wallet does (docs/topups.md): an SPL `transferChecked`
 * of the request's `spl-token` from the payer's token account to the recipient's associated token
 * account (created first if missing, idempotently), with each `reference` appended as a read-only,
 * non-signer account of the transfer instruction. Used by bin/pay-topup.ts and the tests, against
 * the local LiteSVM node (or any RPC URL).
 */
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { DECIMALS, parseAmount } from '../../functions/core/money';

export interface TransferRequest {
  recipient: string;
  splToken: string | undefined;
  references: string[];
}

/** Reads `solana:<recipient>?spl-token=…&reference=…` (Solana Pay transfer request). */
export function parseSolanaPayUrl(url: string): TransferRequest {
  if (!url.startsWith('solana:')) throw new Error('not a Solana Pay URL (solana:…)');
  const [recipient = '', query = ''] = url.slice('solana:'.length).split('?', 2);
  const params = new URLSearchParams(query);
  return {
    recipient: decodeURIComponent(recipient),
    splToken: params.get('spl-token') ?? undefined,
    references: params.getAll('reference'),
  };
}

export interface PayOptions {
  rpcUrl: string;
  /** The payer's secret key, base58. */
  payerSecret: string;
  solanaPayUrl: string;
  /** Decimal amount of the token, e.g. "25" or "12.345678". */
  amount: string;
  /** Pay with another mint than the request's (tests of the wrong-mint path). */
  mintOverride?: string;
  /** Leave the reference out (tests of the no-reference path). */
  withoutReference?: boolean;
}

/** Sends the transfer and returns its signature (the local node lands it at once). */
export async function payTransferRequest(opts: PayOptions): Promise<string> {
  const request = parseSolanaPayUrl(opts.solanaPayUrl);
  const mintText = opts.mintOverride ?? request.splToken;
  if (!mintText) throw new Error('the request names no spl-token');
  const connection = new Connection(opts.rpcUrl, 'confirmed');
  const payer = Keypair.fromSecretKey(bs58.decode(opts.payerSecret));
  const mint = new PublicKey(mintText);
  const recipient = new PublicKey(request.recipient);
  const source = getAssociatedTokenAddressSync(mint, payer.publicKey);
  const destination = getAssociatedTokenAddressSync(mint, recipient, true);
  const minor = BigInt(parseAmount(opts.amount, 'USDC', Number.MAX_SAFE_INTEGER));
  const transfer = createTransferCheckedInstruction(source, mint, destination, payer.publicKey, minor, DECIMALS.USDC);
  if (!opts.withoutReference) {
    for (const reference of request.references)
      transfer.keys.push({ pubkey: new PublicKey(reference), isSigner: false, isWritable: false });
  }
  const { blockhash } = await connection.getLatestBlockhash();
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
    createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, destination, recipient, mint),
    transfer,
  );
  tx.sign(payer);
  return connection.sendRawTransaction(tx.serialize());
}
