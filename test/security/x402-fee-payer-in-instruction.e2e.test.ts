/**
 * Issue 29 red team, a variant of finding 2 the caps do not cover: the fee payer's signature covers
 * every instruction of the transaction, and the stock `exact` scheme's static layout lets up to four
 * instructions after the transfer run unexamined when they are Lighthouse's (or the memo's), with
 * any accounts: the fee payer's included. Lighthouse's `MemoryWrite` creates a memory account funded
 * by its `payer`; a buyer who names the hot wallet as that payer makes the hot wallet pay the rent of
 * an account of the buyer's sizing, on every payment, whatever the compute budget caps say.
 *
 * The local chain has no Lighthouse: the Associated Token Account program is deployed at
 * Lighthouse's address in its stead, whose `CreateIdempotent` funds a new account from its payer
 * exactly as `MemoryWrite` does (2,039,280 lamports of rent each, a hundred times the cap on a
 * settlement's fee). The attacker: a buyer paying a seller with such a transaction. The property:
 * the fee payer appears in no instruction, so such a payment is refused by verify and by settle,
 * and the hot wallet's lamports do not move.
 */
import { TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { Keypair, PublicKey, SystemProgram, TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { expectLedgerBalanced } from '../support/audit';
import { useTestStack } from '../support/stack';
import { type FacilitatorSeller, useFacilitatorFixture } from '../support/x402';
import { exactTransaction, latestBlockhash, payloadOf, requirementsFor } from '../x402/attacker';

const LIGHTHOUSE = new PublicKey('L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95');
const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL';
const MEMO_PROGRAM = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

const t = useTestStack();
const x402 = useFacilitatorFixture(t);
let seller: FacilitatorSeller;
let memo: string;
let buyer: Keypair;
let treasury: string;

beforeAll(async () => {
  t.stack.rails.solana.copyProgram(ASSOCIATED_TOKEN_PROGRAM, LIGHTHOUSE.toBase58());
  seller = await x402.seller();
  memo = seller.memo as string;
  buyer = Keypair.fromSecretKey(bs58.decode(t.stack.rails.solana.demoPayer.secretKey));
  treasury = x402.treasury;
});
afterEach(async () => {
  await expectLedgerBalanced();
});

/** An instruction of "Lighthouse" that creates an account paid for by `payer` (a fresh one per call). */
function fundedByPayer(payer: PublicKey): TransactionInstruction {
  const mint = new PublicKey(t.stack.rails.solana.mint);
  const owner = Keypair.generate().publicKey;
  const [account] = PublicKey.findProgramAddressSync([owner.toBuffer(), TOKEN_PROGRAM_ID.toBuffer(), mint.toBuffer()], LIGHTHOUSE);
  return new TransactionInstruction({
    programId: LIGHTHOUSE,
    keys: [
      { pubkey: payer, isSigner: true, isWritable: true },
      { pubkey: account, isSigner: false, isWritable: true },
      { pubkey: owner, isSigner: false, isWritable: false },
      { pubkey: mint, isSigner: false, isWritable: false },
      { pubkey: SystemProgram.programId, isSigner: false, isWritable: false },
      { pubkey: TOKEN_PROGRAM_ID, isSigner: false, isWritable: false },
    ],
    data: Buffer.from([1]),
  });
}

/** A 0.01 USDC payment to the seller whose instructions after the memo are `extra`. */
const payment = (extra: TransactionInstruction[]) => x402.craftedPayment({ memo, computeUnits: 200_000, microLamports: 1, extra });

const ask = (path: '/x402/verify' | '/x402/settle', payload: Awaited<ReturnType<typeof payment>>) =>
  x402.ask(path, seller, payload, payload.accepted, 'bearer');

const usdcBalance = () => x402.usdcBalance(seller);

describe('the fee payer is in no instruction of a payment', () => {
  it('refuses a payment whose Lighthouse instructions make the hot wallet pay for accounts: its lamports do not move', async () => {
    const { solana } = t.stack.rails;
    const hotWallet = new PublicKey(treasury);
    const lamportsBefore = solana.lamports(treasury);
    const payload = await payment([fundedByPayer(hotWallet), fundedByPayer(hotWallet), fundedByPayer(hotWallet)]);

    const verified = await ask('/x402/verify', payload);
    const settled = await ask('/x402/settle', payload);

    expect(lamportsBefore - solana.lamports(treasury)).toBe(0n);
    expect(await usdcBalance()).toBe(0);
    expect(verified.body).toMatchObject({ isValid: false, invalidReason: 'invalid_exact_svm_payload_fee_payer_in_instruction' });
    expect(settled.body).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_svm_payload_fee_payer_in_instruction',
      transaction: '',
    });
  });

  it('refuses the fee payer as an account of the memo too', async () => {
    const { solana } = t.stack.rails;
    solana.expireBlockhash();
    const signedMemo = new TransactionInstruction({
      programId: MEMO_PROGRAM,
      keys: [{ pubkey: new PublicKey(treasury), isSigner: true, isWritable: false }],
      data: Buffer.from(memo),
    });
    const { base64 } = exactTransaction({
      feePayer: treasury,
      from: buyer.publicKey.toBase58(),
      to: treasury,
      mint: solana.mint,
      amount: 10_000n,
      computeUnits: 200_000,
      microLamports: 1,
      extra: [signedMemo],
      blockhash: await latestBlockhash(solana.url),
      signers: [buyer],
    });
    const payload = payloadOf(
      base64,
      requirementsFor({ network: solana.network, mint: solana.mint, treasury, feePayer: treasury, amount: 10_000n, memo }),
    );
    const lamportsBefore = solana.lamports(treasury);
    const usdcBefore = await usdcBalance();
    expect((await ask('/x402/verify', payload)).body).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_svm_payload_fee_payer_in_instruction',
    });
    expect((await ask('/x402/settle', payload)).body).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_svm_payload_fee_payer_in_instruction',
      transaction: '',
    });
    expect(lamportsBefore - solana.lamports(treasury)).toBe(0n);
    expect(await usdcBalance()).toBe(usdcBefore);
  });

  it('still settles a payment whose Lighthouse instruction names only the buyer’s accounts, once', async () => {
    const { solana } = t.stack.rails;
    const payload = await payment([fundedByPayer(buyer.publicKey)]);
    const lamportsBefore = solana.lamports(treasury);
    const usdcBefore = await usdcBalance();

    const settled = await ask('/x402/settle', payload);

    expect(settled.body).toMatchObject({ success: true });
    // Two signatures at 5,000 lamports and 200,000 units at 1 µlamport: the fee, and nothing else.
    expect(lamportsBefore - solana.lamports(treasury)).toBe(10_001n);
    expect((await usdcBalance()) - usdcBefore).toBeCloseTo(0.01, 6);
  });
});
