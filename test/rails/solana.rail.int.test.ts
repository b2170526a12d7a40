/**
 * The Solana rail against a real LiteSVM (SPL Token, ATA and Memo programs) behind the local
 * JSON-RPC stand-in, through the production `Connection` code path.
 */
import { randomUUID } from 'node:crypto';
import { createTransferCheckedInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { type LocalSolana, startLocalSolana } from '../../bin/local/solana-rpc';
import { CheckpointError, PlatformFundsError, RailUnavailableError } from '../../functions/rails/errors';
import type { PayoutInstruction, RailOutcome } from '../../functions/rails/rail';
import { SolanaRail } from '../../functions/rails/solana.rail';
import { MemoryCheckpoint } from './checkpoint';

const NET = 9_710_000; // 10.01 USDC gross − 3 % fee
const FEE_LAMPORTS = 5_000n;

function railFor(chain: LocalSolana, confirmTimeoutMs = 200): SolanaRail {
  return new SolanaRail({
    rpcUrl: chain.url,
    mint: chain.mint,
    commitment: 'confirmed',
    hotWalletSecret: async () => chain.hotWallet.secretKey,
    pollIntervalMs: 10,
    confirmTimeoutMs,
    rpcTimeoutMs: 2_000,
  });
}

function payout(destination: string, netAmount = NET): PayoutInstruction {
  return { payoutId: `po_${randomUUID()}`, currency: 'USDC', netAmount, destination };
}

/** A fresh wallet with its USDC token account, as a wallet app creates it before receiving USDC. */
function wallet(chain: LocalSolana): string {
  const address = Keypair.generate().publicKey.toBase58();
  chain.createTokenAccount(address);
  return address;
}

function transfersOf(chain: LocalSolana, payoutId: string) {
  return chain.landed().filter((t) => t.memo === `payout:${payoutId}`);
}

function signatureIn(checkpoint: MemoryCheckpoint): string {
  return String(checkpoint.saved?.signature);
}

describe('Solana rail on LiteSVM', () => {
  let chain: LocalSolana;
  let rail: SolanaRail;

  beforeAll(async () => {
    chain = await startLocalSolana();
    rail = railFor(chain);
  });
  afterAll(async () => {
    await chain.stop();
  });

  it('refuses a wallet without a USDC token account before signing: failed with the reason the agent reads, no rent paid', async () => {
    const destination = Keypair.generate().publicKey.toBase58();
    const hot = chain.hotWallet.publicKey;
    const [usdcBefore, solBefore, landedBefore] = [chain.tokenBalance(hot), chain.lamports(hot), chain.landed().length];
    const checkpoint = new MemoryCheckpoint();

    const outcome = await rail.pay(payout(destination), checkpoint);

    expect(outcome).toEqual({ kind: 'failed', reason: 'destination has no USDC token account; create it and withdraw again' });
    expect(checkpoint.saves).toHaveLength(0);
    expect(chain.tokenAccountExists(destination)).toBe(false);
    expect([chain.tokenBalance(hot), chain.lamports(hot), chain.landed().length]).toEqual([usdcBefore, solBefore, landedBefore]);
  });

  it('pays exactly the net amount into the existing token account; the hot wallet pays only the fee, never rent', async () => {
    const destination = wallet(chain);
    const hot = chain.hotWallet.publicKey;
    const [usdcBefore, solBefore] = [chain.tokenBalance(hot), chain.lamports(hot)];

    const checkpoint = new MemoryCheckpoint();
    const instruction = payout(destination);
    const outcome = await rail.pay(instruction, checkpoint);

    const signature = signatureIn(checkpoint);
    expect(outcome).toEqual({ kind: 'completed', externalId: signature, txHash: signature });
    expect(checkpoint.saves).toHaveLength(1);
    expect(checkpoint.saved).toMatchObject({ rail: 'solana', attempt: 1, lastValidBlockHeight: expect.any(Number) });
    expect(chain.tokenBalance(destination)).toBe(BigInt(NET));
    expect(usdcBefore - chain.tokenBalance(hot)).toBe(BigInt(NET));
    expect(solBefore - chain.lamports(hot)).toBe(FEE_LAMPORTS);
    expect(transfersOf(chain, instruction.payoutId)).toEqual([expect.objectContaining({ signature, err: null })]);
  });

  it('pays two payouts of the same amount to the same wallet in one blockhash window as two transfers', async () => {
    // Without the payout-id memo these two transactions would be byte-identical.
    const destination = wallet(chain);
    const first = await rail.pay(payout(destination), new MemoryCheckpoint());
    const second = await rail.pay(payout(destination), new MemoryCheckpoint());

    expect(first.kind).toBe('completed');
    expect(second.kind).toBe('completed');
    expect(first.kind === 'completed' && second.kind === 'completed' && first.externalId !== second.externalId).toBe(true);
    expect(chain.tokenBalance(destination)).toBe(BigInt(2 * NET));
  });

  it('answers a redelivery after completion from the chain, moving nothing', async () => {
    const destination = wallet(chain);
    const instruction = payout(destination);
    const checkpoint = new MemoryCheckpoint();
    const first = await rail.pay(instruction, checkpoint);

    const again = checkpoint.redeliver();
    const second = await rail.pay(instruction, again);

    expect(second).toEqual(first);
    expect(again.saves).toHaveLength(0);
    expect(transfersOf(chain, instruction.payoutId)).toHaveLength(1);
    expect(chain.tokenBalance(destination)).toBe(BigInt(NET));
  });

  it('crash after the checkpoint save, before sending: the redelivery sends the saved transaction, once', async () => {
    const destination = wallet(chain);
    const instruction = payout(destination);
    const crashing = new MemoryCheckpoint(undefined, true);

    await expect(rail.pay(instruction, crashing)).rejects.toThrow('simulated crash');
    expect(transfersOf(chain, instruction.payoutId)).toHaveLength(0);

    const again = crashing.redeliver();
    const outcome = await rail.pay(instruction, again);

    expect(outcome).toMatchObject({ kind: 'completed', externalId: signatureIn(crashing) });
    expect(again.saves).toHaveLength(0); // nothing new signed
    expect(transfersOf(chain, instruction.payoutId)).toHaveLength(1);
    expect(chain.tokenBalance(destination)).toBe(BigInt(NET));
  });

  it('crash after sending, before the status was read: the redelivery finds the landed transaction', async () => {
    const destination = wallet(chain);
    const instruction = payout(destination);
    const checkpoint = new MemoryCheckpoint();
    chain.failNext('getSignatureStatuses');

    await expect(rail.pay(instruction, checkpoint)).rejects.toBeInstanceOf(RailUnavailableError);
    expect(transfersOf(chain, instruction.payoutId)).toHaveLength(1);

    const again = checkpoint.redeliver();
    const outcome = await rail.pay(instruction, again);

    expect(outcome).toMatchObject({ kind: 'completed', externalId: signatureIn(checkpoint) });
    expect(again.saves).toHaveLength(0);
    expect(transfersOf(chain, instruction.payoutId)).toHaveLength(1);
    expect(chain.tokenBalance(destination)).toBe(BigInt(NET));
  });

  it('re-sends a dropped transaction with the same bytes while its blockhash is valid', async () => {
    const destination = wallet(chain);
    const instruction = payout(destination);
    const checkpoint = new MemoryCheckpoint();
    chain.dropNextSends(1);

    const first = await rail.pay(instruction, checkpoint);
    expect(first).toEqual({ kind: 'pending', externalId: signatureIn(checkpoint) });
    expect(transfersOf(chain, instruction.payoutId)).toHaveLength(0);

    const again = checkpoint.redeliver();
    const second = await rail.pay(instruction, again);

    expect(second).toMatchObject({ kind: 'completed', externalId: signatureIn(checkpoint) });
    expect(again.saves).toHaveLength(0);
    expect(transfersOf(chain, instruction.payoutId)).toHaveLength(1);
  });

  it('never signs again while the saved transaction could still land, however many blocks pass', async () => {
    const instruction = payout(wallet(chain));
    const checkpoint = new MemoryCheckpoint();
    chain.dropNextSends(1);
    await rail.pay(instruction, checkpoint);
    const lastValid = Number(checkpoint.saved?.lastValidBlockHeight);

    chain.advanceBlocks(lastValid - chain.blockHeight()); // exactly at the last valid height
    chain.dropNextSends(1);
    const again = checkpoint.redeliver();
    const outcome = await rail.pay(instruction, again);

    expect(outcome).toEqual({ kind: 'pending', externalId: signatureIn(checkpoint) });
    expect(again.saves).toHaveLength(0);
    expect(transfersOf(chain, instruction.payoutId)).toHaveLength(0);
    chain.expireBlockhash(); // leave the chain past this payout's window for the next tests
  });

  it('signs anew only once the old blockhash expired unlanded: one transfer in total', async () => {
    const destination = wallet(chain);
    const instruction = payout(destination);
    const checkpoint = new MemoryCheckpoint();
    chain.dropNextSends(1);
    await rail.pay(instruction, checkpoint);
    const old = { signature: signatureIn(checkpoint), tx: String(checkpoint.saved?.tx) };

    chain.expireBlockhash(); // block height now past the old lastValidBlockHeight
    const again = checkpoint.redeliver();
    const outcome = await rail.pay(instruction, again);

    const renewed = signatureIn(again);
    expect(renewed).not.toBe(old.signature);
    expect(again.saved).toMatchObject({ attempt: 2 });
    expect(outcome).toEqual({ kind: 'completed', externalId: renewed, txHash: renewed });

    // The expired transaction can never land now, even if someone sends its bytes.
    await new Connection(chain.url).sendRawTransaction(Buffer.from(old.tx, 'base64'), { skipPreflight: true });
    expect(transfersOf(chain, instruction.payoutId).map((t) => t.signature)).toEqual([renewed]);
    expect(chain.tokenBalance(destination)).toBe(BigInt(NET));
  });

  it('stops waiting as soon as an unlanded transaction can no longer land, instead of holding the worker', async () => {
    const patient = railFor(chain, 10_000);
    const instruction = payout(wallet(chain));
    const checkpoint = new MemoryCheckpoint();
    chain.dropNextSends(1);
    const started = Date.now();
    const expiring = setTimeout(() => chain.expireBlockhash(), 100);
    const outcome = await patient.pay(instruction, checkpoint);
    clearTimeout(expiring);
    expect(outcome).toEqual({ kind: 'pending', externalId: signatureIn(checkpoint) });
    expect(Date.now() - started).toBeLessThan(5_000); // not the 10 s confirmation timeout
    expect(transfersOf(chain, instruction.payoutId)).toHaveLength(0);
    // The next attempt signs anew and pays once.
    const again = checkpoint.redeliver();
    expect(await patient.pay(instruction, again)).toMatchObject({ kind: 'completed' });
    expect(transfersOf(chain, instruction.payoutId)).toHaveLength(1);
  });

  it('answers pending while the transaction is only processed, completed once confirmed', async () => {
    const instruction = payout(wallet(chain));
    const checkpoint = new MemoryCheckpoint();
    chain.holdConfirmations(true);
    try {
      expect(await rail.pay(instruction, checkpoint)).toEqual({ kind: 'pending', externalId: signatureIn(checkpoint) });
    } finally {
      chain.holdConfirmations(false);
    }
    expect(await rail.pay(instruction, checkpoint.redeliver())).toMatchObject({ kind: 'completed', externalId: signatureIn(checkpoint) });
  });

  it.each<[string, () => string]>([
    ['not base58', () => 'not-a-solana-address!'],
    ['too short', () => bs58.encode(Buffer.alloc(16, 7))],
    [
      'off the ed25519 curve: a token account',
      () => getAssociatedTokenAddressSync(new PublicKey(chain.mint), Keypair.generate().publicKey).toBase58(),
    ],
    ['the System Program id (a small-order point)', () => '11111111111111111111111111111111'],
    ['the SPL Token program id (on the curve)', () => 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'],
  ])('fails an invalid destination (%s) without touching the chain', async (_, destination) => {
    const checkpoint = new MemoryCheckpoint();
    const landedBefore = chain.landed().length;

    const outcome: RailOutcome = await rail.pay(payout(destination()), checkpoint);

    expect(outcome).toEqual({ kind: 'failed', reason: 'invalid solana address' });
    expect(checkpoint.saves).toHaveLength(0);
    expect(chain.landed()).toHaveLength(landedBefore);
  });

  it('fails a payout to the USDC mint itself without touching the chain', async () => {
    const checkpoint = new MemoryCheckpoint();
    expect(await rail.pay(payout(chain.mint), checkpoint)).toEqual({ kind: 'failed', reason: 'destination is the USDC mint' });
    expect(checkpoint.saves).toHaveLength(0);
  });

  it('throws (transient) when the RPC node is unavailable before anything was signed', async () => {
    const checkpoint = new MemoryCheckpoint();
    chain.failNext('getLatestBlockhash');

    await expect(rail.pay(payout(wallet(chain)), checkpoint)).rejects.toBeInstanceOf(RailUnavailableError);
    expect(checkpoint.saves).toHaveLength(0);
  });

  it('refuses a checkpoint it cannot read instead of signing blindly', async () => {
    const checkpoint = new MemoryCheckpoint({ rail: 'paypal', batchId: 'X' });
    await expect(rail.pay(payout(wallet(chain)), checkpoint)).rejects.toBeInstanceOf(CheckpointError);
  });
});

describe('Solana rail when the hot wallet runs short', () => {
  let chain: LocalSolana;
  let rail: SolanaRail;

  beforeAll(async () => {
    chain = await startLocalSolana({ hotWalletMicroUsdc: 10_000_000n }); // 10 USDC
    rail = railFor(chain);
  });
  afterAll(async () => {
    await chain.stop();
  });

  it('throws PlatformFundsError before signing when the hot wallet lacks the USDC', async () => {
    const checkpoint = new MemoryCheckpoint();
    await expect(rail.pay(payout(wallet(chain), 11_000_000), checkpoint)).rejects.toBeInstanceOf(PlatformFundsError);
    expect(checkpoint.saves).toHaveLength(0);
  });

  it('fails a payout whose transaction landed with an error: no tokens moved, and it cannot land again', async () => {
    // Payout A is signed while the funds are there, but its send is dropped; payout B then takes
    // most of the funds; A's re-send lands and fails on chain (insufficient funds).
    const a = payout(wallet(chain), 9_000_000);
    const aCheckpoint = new MemoryCheckpoint();
    chain.dropNextSends(1);
    expect((await rail.pay(a, aCheckpoint)).kind).toBe('pending');
    expect((await rail.pay(payout(wallet(chain), 5_000_000), new MemoryCheckpoint())).kind).toBe('completed');

    const outcome = await rail.pay(a, aCheckpoint.redeliver());

    expect(outcome).toMatchObject({ kind: 'failed', externalId: signatureIn(aCheckpoint) });
    expect(outcome.kind === 'failed' && outcome.reason).toMatch(/InstructionError/);
    expect(chain.tokenBalance(a.destination)).toBe(0n);
    expect(chain.tokenBalance(chain.hotWallet.publicKey)).toBe(5_000_000n);
    // Asked again (the worker crashed before recording FAILED): the same answer, nothing signed.
    const again = aCheckpoint.redeliver();
    expect(await rail.pay(a, again)).toEqual(outcome);
    expect(again.saves).toHaveLength(0);
  });

  it('the stand-in answers a failing preflight with a JSON-RPC error and lands nothing', async () => {
    const hot = Keypair.fromSecretKey(bs58.decode(chain.hotWallet.secretKey));
    const connection = new Connection(chain.url);
    const mint = new PublicKey(chain.mint);
    const target = wallet(chain);
    chain.mintTo(target, 1n); // creates the target's token account
    const tx = new Transaction({ feePayer: hot.publicKey, ...(await connection.getLatestBlockhash()) }).add(
      createTransferCheckedInstruction(
        getAssociatedTokenAddressSync(mint, hot.publicKey),
        mint,
        getAssociatedTokenAddressSync(mint, new PublicKey(target)),
        hot.publicKey,
        1_000_000_000n,
        6,
      ),
    );
    tx.sign(hot);
    const landedBefore = chain.landed().length;

    await expect(connection.sendRawTransaction(tx.serialize())).rejects.toThrow(/simulation failed/i);
    expect(chain.landed()).toHaveLength(landedBefore);
    expect(chain.tokenBalance(target)).toBe(1n);
  });
});

describe('Solana rail when a failed transaction is not finalized yet', () => {
  let chain: LocalSolana;
  let rail: SolanaRail;

  beforeAll(async () => {
    chain = await startLocalSolana({ hotWalletMicroUsdc: 10_000_000n }); // 10 USDC
    rail = railFor(chain);
  });
  afterAll(async () => {
    await chain.stop();
  });

  it('keeps a payout pending while its transaction failed only at processed (a dropped fork could land it), failed once finalized', async () => {
    // As above: A is signed, its send dropped; B takes most of the funds; A's re-send fails on chain.
    const a = payout(wallet(chain), 9_000_000);
    const aCheckpoint = new MemoryCheckpoint();
    chain.dropNextSends(1);
    expect((await rail.pay(a, aCheckpoint)).kind).toBe('pending');
    expect((await rail.pay(payout(wallet(chain), 5_000_000), new MemoryCheckpoint())).kind).toBe('completed');

    chain.holdConfirmations(true);
    try {
      const early = await rail.pay(a, aCheckpoint.redeliver());
      expect(early).toEqual({ kind: 'pending', externalId: signatureIn(aCheckpoint) });
      expect(chain.landed().find((t) => t.signature === signatureIn(aCheckpoint))?.err).not.toBeNull();
    } finally {
      chain.holdConfirmations(false);
    }

    const again = aCheckpoint.redeliver();
    const outcome = await rail.pay(a, again);
    expect(outcome).toMatchObject({ kind: 'failed', externalId: signatureIn(aCheckpoint) });
    expect(again.saves).toHaveLength(0);
    expect(chain.tokenBalance(a.destination)).toBe(0n);
  });
});
