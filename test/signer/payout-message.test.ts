/**
 * The hot-wallet signer signs a payout's message only when it is exactly that payout's transfer
 * (functions/signer/payout-message.ts): the message the payout rail builds passes; any change of
 * amount, destination, memo, fee caps, signers, mint or instructions is refused before a signature.
 */
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import { ComputeBudgetProgram, Keypair, type PublicKey, SystemProgram, Transaction, TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { MAX_SOLANA_COMPUTE_UNIT_LIMIT, MAX_SOLANA_PRIORITY_FEE_MICROLAMPORTS } from '../../functions/config';
import type { PayoutToSign } from '../../functions/rails/hot-wallet-signer';
import { MEMO_PROGRAM_ID, TOKEN_ACCOUNT_CREATION_COMPUTE_UNITS } from '../../functions/rails/solana.rail';
import { checkPayoutMessage, UncheckedPayoutError } from '../../functions/signer/payout-message';
import { keySigner } from '../../functions/signer/sign';

const hot = Keypair.generate();
const mint = Keypair.generate().publicKey;
const owner = Keypair.generate().publicKey;
const BLOCKHASH = bs58.encode(Buffer.alloc(32, 7));
const payout: PayoutToSign = { payoutId: 'po_123', destination: owner.toBase58(), netAmount: 2_500_000, createTokenAccount: false };

interface Shape {
  feePayer?: PublicKey;
  units?: number;
  price?: number;
  memo?: string;
  create?: boolean;
  amount?: bigint;
  to?: PublicKey;
  mint?: PublicKey;
  program?: PublicKey;
  extra?: TransactionInstruction[];
}

/** The message functions/rails/solana.rail.ts builds for `payout`, with one thing changed. */
function message(shape: Shape = {}): Uint8Array {
  const program = shape.program ?? TOKEN_PROGRAM_ID;
  const m = shape.mint ?? mint;
  const to = shape.to ?? owner;
  const hotAta = getAssociatedTokenAddressSync(m, hot.publicKey, false, program);
  const destination = getAssociatedTokenAddressSync(m, to, false, program);
  const tx = new Transaction({ feePayer: shape.feePayer ?? hot.publicKey, blockhash: BLOCKHASH, lastValidBlockHeight: 100 });
  tx.add(
    ComputeBudgetProgram.setComputeUnitLimit({ units: shape.units ?? 40_000 }),
    ComputeBudgetProgram.setComputeUnitPrice({ microLamports: shape.price ?? 10_000 }),
    new TransactionInstruction({
      programId: MEMO_PROGRAM_ID,
      keys: [],
      data: Buffer.from(shape.memo ?? `payout:${payout.payoutId}`, 'utf8'),
    }),
    ...(shape.create ? [createAssociatedTokenAccountIdempotentInstruction(hot.publicKey, destination, to, m, program)] : []),
    ...(shape.extra ?? []),
    createTransferCheckedInstruction(hotAta, m, destination, hot.publicKey, shape.amount ?? 2_500_000n, 6, [], program),
  );
  return tx.serializeMessage();
}

const check =
  (bytes: Uint8Array, p: PayoutToSign = payout) =>
  () =>
    checkPayoutMessage(bytes, p, hot.publicKey, mint);

describe("the signer's payout check", () => {
  it('passes the message the rail builds, with or without the paid-for token account, on either token program', () => {
    expect(check(message())).not.toThrow();
    expect(
      check(message({ create: true, units: 40_000 + TOKEN_ACCOUNT_CREATION_COMPUTE_UNITS }), { ...payout, createTokenAccount: true }),
    ).not.toThrow();
    expect(check(message({ program: TOKEN_2022_PROGRAM_ID }))).not.toThrow();
  });

  // Every row names its payout: a row of two would leave the test's third parameter to Jest's `done`.
  it.each<[string, Uint8Array, PayoutToSign]>([
    ['another amount', message({ amount: 2_500_001n }), payout],
    ['another destination', message({ to: Keypair.generate().publicKey }), payout],
    ['another mint', message({ mint: Keypair.generate().publicKey }), payout],
    ["another payout's memo", message({ memo: 'payout:po_999' }), payout],
    ['another fee payer', message({ feePayer: Keypair.generate().publicKey }), payout],
    ['a compute unit limit above the cap', message({ units: MAX_SOLANA_COMPUTE_UNIT_LIMIT + 1 }), payout],
    ['a price above the cap', message({ price: MAX_SOLANA_PRIORITY_FEE_MICROLAMPORTS + 1 }), payout],
    ['a token account the payout did not pay for', message({ create: true }), payout],
    ['a missing token account creation the payout paid for', message(), { ...payout, createTokenAccount: true }],
    [
      'an extra instruction',
      message({ extra: [SystemProgram.transfer({ fromPubkey: hot.publicKey, toPubkey: owner, lamports: 1 })] }),
      payout,
    ],
    ['the hot wallet as destination', message({ to: hot.publicKey }), { ...payout, destination: hot.publicKey.toBase58() }],
    ['a net amount that is not whole', message(), { ...payout, netAmount: 2.5 }],
    ['bytes that are no message', Uint8Array.from([1, 2, 3]), payout],
  ])('refuses %s', (_what, bytes, p) => {
    expect(check(bytes, p)).toThrow(UncheckedPayoutError);
  });

  it("checks an x402 refund (DESIGN §28) as a payout: its own memo and amount, the payer's account created on its first refund", () => {
    const refund: PayoutToSign = {
      payoutId: 'xr01jhx3k6v1f8q2n7c9m4p5r6s7',
      destination: owner.toBase58(),
      netAmount: 4_000,
      createTokenAccount: true,
    };
    const units = 40_000 + TOKEN_ACCOUNT_CREATION_COMPUTE_UNITS;
    const shaped = (over: Shape = {}) => message({ memo: `payout:${refund.payoutId}`, amount: 4_000n, create: true, units, ...over });
    expect(check(shaped(), refund)).not.toThrow();
    expect(check(message({ memo: `payout:${refund.payoutId}`, amount: 4_000n }), { ...refund, createTokenAccount: false })).not.toThrow();
    expect(check(shaped({ memo: 'payout:xr01jhx3k6v1f8q2n7c9m4p5r6s8' }), refund)).toThrow(UncheckedPayoutError);
    expect(check(shaped({ amount: 4_001n }), refund)).toThrow(UncheckedPayoutError);
    expect(check(shaped({ to: Keypair.generate().publicKey }), refund)).toThrow(UncheckedPayoutError);
  });

  it('signs through the signer only what passes, and its signature is the hot wallet’s over those bytes', async () => {
    const signer = keySigner({ secret: async () => bs58.encode(hot.secretKey), mint: mint.toBase58() });
    expect(await signer.sign({ kind: 'address' })).toBe(hot.publicKey.toBase58());
    const bytes = message();
    const signature = await signer.sign({ kind: 'payout', payout, message: Buffer.from(bytes).toString('base64') });
    const { verify } = await import('node:crypto');
    const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), hot.publicKey.toBuffer()]);
    expect(verify(null, bytes, { key: spki, format: 'der', type: 'spki' }, Buffer.from(bs58.decode(signature)))).toBe(true);
    await expect(
      signer.sign({ kind: 'payout', payout, message: Buffer.from(message({ amount: 1n })).toString('base64') }),
    ).rejects.toBeInstanceOf(UncheckedPayoutError);
  });
});
