/**
 * What the hot wallet signs for a payout: exactly the transaction functions/rails/solana.rail.ts
 * builds for it, and nothing else. The message (a legacy transaction message) is decoded and must
 * be, in this order: the compute budget's unit limit and price (within the configuration's caps),
 * the memo `payout:<id>`, the destination's idempotent token-account creation only when the payout
 * paid for it, and ONE TransferChecked of exactly the net amount of the USDC mint from the hot
 * wallet's token account to the destination's, with the hot wallet as the only signer (fee payer
 * and authority). A destination the rail would refuse (not a wallet, the hot wallet, the mint) is
 * refused here too.
 */
import { ASSOCIATED_TOKEN_PROGRAM_ID, getAssociatedTokenAddressSync, TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { ComputeBudgetProgram, Message, type PublicKey, SystemProgram } from '@solana/web3.js';
import bs58 from 'bs58';
import { MAX_SOLANA_COMPUTE_UNIT_LIMIT, MAX_SOLANA_PRIORITY_FEE_MICROLAMPORTS } from '../config';
import type { PayoutToSign } from '../rails/hot-wallet-signer';
import { MEMO_PROGRAM_ID, TOKEN_ACCOUNT_CREATION_COMPUTE_UNITS, USDC_DECIMALS, walletAddress } from '../rails/solana.rail';

/** The hot wallet was asked to sign a payout message that is not exactly the payout: never signed. */
export class UncheckedPayoutError extends Error {
  constructor(why: string) {
    super(`the hot wallet signs only the payout's transfer: ${why}`);
    this.name = 'UncheckedPayoutError';
  }
}

const TRANSFER_CHECKED = 12;
const CREATE_IDEMPOTENT = 1;
const SET_COMPUTE_UNIT_LIMIT = 2;
const SET_COMPUTE_UNIT_PRICE = 3;

/** Throws UncheckedPayoutError unless `bytes` are exactly the message of `payout`, paid by `hotWallet` in `mint`. */
export function checkPayoutMessage(bytes: Uint8Array, payout: PayoutToSign, hotWallet: PublicKey, mint: PublicKey): void {
  const fail = (why: string): never => {
    throw new UncheckedPayoutError(why);
  };
  if (!Number.isSafeInteger(payout.netAmount) || payout.netAmount <= 0) fail('net amount');
  const owner = walletAddress(payout.destination);
  if (!owner) throw new UncheckedPayoutError('destination is not a wallet');
  if (owner.equals(hotWallet) || owner.equals(mint)) fail('destination');
  let message: Message;
  try {
    message = Message.from(Buffer.from(bytes));
  } catch {
    throw new UncheckedPayoutError('undecodable message');
  }
  // Message.from reads any bytes that begin like a message: what it read must be all of them.
  if (!Buffer.from(message.serialize()).equals(Buffer.from(bytes))) fail('not a legacy message');
  const keys = message.accountKeys;
  if (message.header.numRequiredSignatures !== 1 || !keys[0]?.equals(hotWallet)) fail('signers other than the hot wallet');
  const ix = message.instructions;
  const create = payout.createTokenAccount;
  if (ix.length !== (create ? 5 : 4)) fail('instruction count');
  const program = (i: number) => keys[ix[i]?.programIdIndex ?? -1];
  const accounts = (i: number) => (ix[i]?.accounts ?? []).map((k) => keys[k]?.toBase58());
  const data = (i: number) => Buffer.from(bs58.decode(ix[i]?.data ?? ''));

  const limit = data(0);
  const units = limit.length === 5 && limit[0] === SET_COMPUTE_UNIT_LIMIT ? limit.readUInt32LE(1) : -1;
  const maxUnits = MAX_SOLANA_COMPUTE_UNIT_LIMIT + (create ? TOKEN_ACCOUNT_CREATION_COMPUTE_UNITS : 0);
  if (!program(0)?.equals(ComputeBudgetProgram.programId) || accounts(0).length > 0 || units < 0 || units > maxUnits)
    fail('compute unit limit');
  const price = data(1);
  const microLamports = price.length === 9 && price[0] === SET_COMPUTE_UNIT_PRICE ? price.readBigUInt64LE(1) : -1n;
  if (!program(1)?.equals(ComputeBudgetProgram.programId) || accounts(1).length > 0 || microLamports < 0n) fail('compute unit price');
  if (microLamports > BigInt(MAX_SOLANA_PRIORITY_FEE_MICROLAMPORTS)) fail('compute unit price');
  if (!program(2)?.equals(MEMO_PROGRAM_ID) || accounts(2).length > 0 || data(2).toString('utf8') !== `payout:${payout.payoutId}`)
    fail('memo');

  const t = ix.length - 1;
  const tokenProgram = program(t);
  if (!tokenProgram || !(tokenProgram.equals(TOKEN_PROGRAM_ID) || tokenProgram.equals(TOKEN_2022_PROGRAM_ID)))
    throw new UncheckedPayoutError('token program');
  const source = getAssociatedTokenAddressSync(mint, hotWallet, false, tokenProgram).toBase58();
  const destination = getAssociatedTokenAddressSync(mint, owner, false, tokenProgram).toBase58();
  if (create) {
    const expected = [hotWallet, destination, owner, mint, SystemProgram.programId, tokenProgram].map(String);
    if (!program(3)?.equals(ASSOCIATED_TOKEN_PROGRAM_ID) || data(3).join() !== String(CREATE_IDEMPOTENT)) fail('token account creation');
    if (accounts(3).join() !== expected.join()) fail('token account creation accounts');
  }
  const transfer = data(t);
  if (transfer.length !== 10 || transfer[0] !== TRANSFER_CHECKED) fail('not a TransferChecked');
  if (transfer.readBigUInt64LE(1) !== BigInt(payout.netAmount)) fail('amount');
  if (transfer[9] !== USDC_DECIMALS) fail('decimals');
  if (accounts(t).join() !== [source, mint.toBase58(), destination, hotWallet.toBase58()].join()) fail('transfer accounts');
}
