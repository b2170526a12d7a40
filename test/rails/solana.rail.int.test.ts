/**
 * The Solana rail against a real LiteSVM (SPL Token, ATA and Memo programs) behind the local
 * JSON-RPC stand-in, through the production `Connection` code path.
 */
import { randomUUID } from 'node:crypto';
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import { ComputeBudgetInstruction, ComputeBudgetProgram, Connection, Keypair, PublicKey, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { type LocalSolana, startLocalSolana } from '../../bin/local/solana-rpc';
import { CheckpointError, PlatformFundsError, RailConfigError, RailUnavailableError } from '../../functions/rails/errors';
import type { PayoutInstruction, RailOutcome } from '../../functions/rails/rail';
import {
  MEMO_PROGRAM_ID,
  NO_TOKEN_ACCOUNT,
  priorityFeeLamports,
  SolanaRail,
  TOKEN_ACCOUNT_CREATION_COMPUTE_UNITS,
} from '../../functions/rails/solana.rail';
import { keySigner } from '../../functions/signer/sign';
import { MemoryCheckpoint } from './checkpoint';

const NET = 9_710_000; // 10.01 USDC gross − 3 % fee
/** Not the config defaults, so the tests show the rail takes what it is given. */
const PRICE = 25_000; // micro-lamports per compute unit
const LIMIT = 30_000; // compute units
const PRIORITY_LAMPORTS = 750n; // 30,000 × 25,000 / 10^6
/** Base fee (5,000 per signature, one signature) plus the priority fee. */
const FEE_LAMPORTS = 5_000n + PRIORITY_LAMPORTS;
/** A system account's rent-exempt minimum (0 data bytes): a fee payer must keep it. */
const RENT_EXEMPT = 890_880n;
/** The rent-exempt minimum of an SPL Token account (165 bytes): what creating one costs the hot wallet. */
const TOKEN_ACCOUNT_RENT = 2_039_280n;

function railFor(
  chain: LocalSolana,
  confirmTimeoutMs = 200,
  fees = { priorityFeeMicroLamports: PRICE, computeUnitLimit: LIMIT },
): SolanaRail {
  return new SolanaRail({
    rpcUrl: chain.url,
    mint: chain.mint,
    commitment: 'confirmed',
    signer: keySigner({ secret: async () => chain.hotWallet.secretKey, mint: chain.mint }),
    pollIntervalMs: 10,
    confirmTimeoutMs,
    rpcTimeoutMs: 2_000,
    ...fees,
  });
}

/** The compute budget a saved (signed, base64) transaction carries, and its program order. */
function budgetOf(base64Tx: unknown) {
  const tx = Transaction.from(Buffer.from(String(base64Tx), 'base64'));
  const [limitIx, priceIx] = tx.instructions;
  if (!limitIx || !priceIx) throw new Error('transaction has fewer than two instructions');
  return {
    programs: tx.instructions.map((ix) => ix.programId.toBase58()),
    limitType: ComputeBudgetInstruction.decodeInstructionType(limitIx),
    units: ComputeBudgetInstruction.decodeSetComputeUnitLimit(limitIx).units,
    priceType: ComputeBudgetInstruction.decodeInstructionType(priceIx),
    microLamports: Number(ComputeBudgetInstruction.decodeSetComputeUnitPrice(priceIx).microLamports),
  };
}

const PAYOUT_BUDGET = {
  limitType: 'SetComputeUnitLimit',
  units: LIMIT,
  priceType: 'SetComputeUnitPrice',
  microLamports: PRICE,
};

function payout(destination: string, netAmount = NET, createTokenAccount?: boolean): PayoutInstruction {
  return {
    payoutId: `po_${randomUUID()}`,
    currency: 'USDC',
    netAmount,
    destination,
    ...(createTokenAccount ? { createTokenAccount } : {}),
  };
}

/** A payout that paid the account-creation fee: the rail creates the token account if missing. */
const creatingPayout = (destination: string, netAmount = NET) => payout(destination, netAmount, true);

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

    expect(outcome).toEqual({ kind: 'failed', reason: NO_TOKEN_ACCOUNT });
    expect(NO_TOKEN_ACCOUNT).toBe('destination has no USDC token account; create it, or withdraw again with createTokenAccount: true');
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

  it('saves a transaction whose first instructions set the configured compute-unit limit and price, and pays that priority fee', async () => {
    const destination = wallet(chain);
    const hot = chain.hotWallet.publicKey;
    const solBefore = chain.lamports(hot);
    const checkpoint = new MemoryCheckpoint();

    expect((await rail.pay(payout(destination), checkpoint)).kind).toBe('completed');

    const budget = budgetOf(checkpoint.saved?.tx);
    expect(budget).toMatchObject(PAYOUT_BUDGET);
    const compute = ComputeBudgetProgram.programId.toBase58();
    expect(budget.programs.slice(0, 3)).toEqual([compute, compute, MEMO_PROGRAM_ID.toBase58()]);
    expect(BigInt(priorityFeeLamports(LIMIT, PRICE))).toBe(PRIORITY_LAMPORTS);
    // LiteSVM charges the priority fee on the requested limit, as a cluster does.
    expect(solBefore - chain.lamports(hot)).toBe(FEE_LAMPORTS);
  });

  it('re-signs a dropped payout after its blockhash expired with the fee again: both signed versions carry it, one transfer', async () => {
    const destination = wallet(chain);
    const hot = chain.hotWallet.publicKey;
    const instruction = payout(destination);
    const checkpoint = new MemoryCheckpoint();
    chain.dropNextSends(1);
    expect((await rail.pay(instruction, checkpoint)).kind).toBe('pending');
    const first = { signature: signatureIn(checkpoint), tx: checkpoint.saved?.tx };

    // While it could still land, a redelivery re-sends the very bytes, so the very fee.
    chain.dropNextSends(1);
    const resent = checkpoint.redeliver();
    expect(await rail.pay(instruction, resent)).toEqual({ kind: 'pending', externalId: first.signature });
    expect(resent.saves).toHaveLength(0);

    chain.expireBlockhash();
    const solBefore = chain.lamports(hot);
    const again = checkpoint.redeliver();
    const outcome = await rail.pay(instruction, again);

    const renewed = signatureIn(again);
    expect(renewed).not.toBe(first.signature);
    expect(outcome).toEqual({ kind: 'completed', externalId: renewed, txHash: renewed });
    expect(budgetOf(first.tx)).toMatchObject(PAYOUT_BUDGET);
    expect(budgetOf(again.saved?.tx)).toMatchObject(PAYOUT_BUDGET);
    expect(transfersOf(chain, instruction.payoutId).map((t) => t.signature)).toEqual([renewed]);
    expect(chain.tokenBalance(destination)).toBe(BigInt(NET));
    expect(solBefore - chain.lamports(hot)).toBe(FEE_LAMPORTS); // one fee: the dropped sends cost nothing
  });

  it('refuses a compute budget outside the configured bounds when built by hand', () => {
    expect(() => railFor(chain, 200, { priorityFeeMicroLamports: 1_000_001, computeUnitLimit: LIMIT })).toThrow(RailConfigError);
    expect(() => railFor(chain, 200, { priorityFeeMicroLamports: -1, computeUnitLimit: LIMIT })).toThrow(RailConfigError);
    expect(() => railFor(chain, 200, { priorityFeeMicroLamports: PRICE, computeUnitLimit: 999 })).toThrow(RailConfigError);
    expect(() => railFor(chain, 200, { priorityFeeMicroLamports: PRICE, computeUnitLimit: 1.5 })).toThrow(RailConfigError);
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

  it('a landed transaction past its blockhash, unknown to a lagging node behind a load balancer: pending, never signed again', async () => {
    const destination = wallet(chain);
    const instruction = payout(destination);
    const checkpoint = new MemoryCheckpoint();
    // It lands; the answer is lost (the worker died), and the blockhash then expires.
    chain.failNext('getSignatureStatuses');
    await expect(rail.pay(instruction, checkpoint)).rejects.toBeInstanceOf(RailUnavailableError);
    expect(transfersOf(chain, instruction.payoutId)).toHaveLength(1);
    chain.expireBlockhash();

    // Every status lookup reaches a node 1,000 blocks behind: the finalized tip (another node) is
    // past the last valid height, but that node's "unknown" proves nothing.
    chain.lagNext('getSignatureStatuses', 1_000, 3);
    const lagging = checkpoint.redeliver();
    expect(await rail.pay(instruction, lagging)).toEqual({ kind: 'pending', externalId: signatureIn(checkpoint) });
    expect(lagging.saves).toHaveLength(0);

    // A node that has caught up finds it: completed, one transfer.
    chain.lagNext('getSignatureStatuses', 1_000, 2);
    const caughtUp = checkpoint.redeliver();
    expect(await rail.pay(instruction, caughtUp)).toMatchObject({ kind: 'completed', externalId: signatureIn(checkpoint) });
    expect(caughtUp.saves).toHaveLength(0);
    expect(transfersOf(chain, instruction.payoutId)).toHaveLength(1);
    expect(chain.tokenBalance(destination)).toBe(BigInt(NET));
  });

  it('signs anew after expiry only on the word of a node that has reached the finalized tip', async () => {
    const destination = wallet(chain);
    const instruction = payout(destination);
    const checkpoint = new MemoryCheckpoint();
    chain.dropNextSends(1);
    await rail.pay(instruction, checkpoint);
    chain.expireBlockhash();

    // The first lookup lags; the next one comes from a node at the tip, which knows it never landed.
    chain.lagNext('getSignatureStatuses', 1_000, 1);
    const again = checkpoint.redeliver();
    const outcome = await rail.pay(instruction, again);
    expect(again.saved).toMatchObject({ attempt: 2 });
    expect(outcome).toMatchObject({ kind: 'completed', externalId: signatureIn(again) });
    expect(transfersOf(chain, instruction.payoutId)).toHaveLength(1);
  });

  it('a payout that may not be paid now (its agent disabled): held after the checks, before anything is signed', async () => {
    const instruction = { ...payout(wallet(chain)), mayPay: async () => false };
    const checkpoint = new MemoryCheckpoint();
    const landedBefore = chain.landed().length;
    expect(await rail.pay(instruction, checkpoint)).toEqual({ kind: 'held' });
    expect(checkpoint.saves).toHaveLength(0);
    expect(chain.landed()).toHaveLength(landedBefore);
  });

  it('a sent transaction of a payout that may no longer be paid is not sent again; once it can never land, held, then signed anew on release', async () => {
    const destination = wallet(chain);
    const instruction = payout(destination);
    const checkpoint = new MemoryCheckpoint();
    chain.dropNextSends(1);
    await rail.pay(instruction, checkpoint);
    let mayPay = false;
    const gated = { ...instruction, mayPay: async () => mayPay };

    // Still valid: the saved bytes are not re-sent (the first send may yet land; nothing more goes).
    const sends = chain.landed().length;
    expect(await rail.pay(gated, checkpoint.redeliver())).toEqual({ kind: 'pending', externalId: signatureIn(checkpoint) });
    expect(chain.landed()).toHaveLength(sends);
    // Expired unlanded: nothing new is signed, it is held.
    chain.expireBlockhash();
    const held = checkpoint.redeliver();
    expect(await rail.pay(gated, held)).toEqual({ kind: 'held' });
    expect(held.saves).toHaveLength(0);
    // Released by the operator: a new signature, one transfer.
    mayPay = true;
    const released = checkpoint.redeliver();
    expect(await rail.pay(gated, released)).toMatchObject({ kind: 'completed' });
    expect(released.saved).toMatchObject({ attempt: 2 });
    expect(transfersOf(chain, instruction.payoutId)).toHaveLength(1);
    expect(chain.tokenBalance(destination)).toBe(BigInt(NET));
  });

  it('the stand-in answers like a lagging node: an older context slot, and a minContextSlot past it refused', async () => {
    const connection = new Connection(chain.url);
    const tip = chain.blockHeight();
    chain.lagNext('getEpochInfo', 10, 2);
    expect(await connection.getEpochInfo('finalized')).toMatchObject({ absoluteSlot: tip - 10, blockHeight: tip - 10 });
    await expect(connection.getEpochInfo({ commitment: 'finalized', minContextSlot: tip })).rejects.toThrow(/Minimum context slot/);
    expect(await connection.getEpochInfo({ commitment: 'finalized', minContextSlot: tip })).toMatchObject({ blockHeight: tip });
  });

  it('stops waiting as soon as an unlanded transaction can no longer land, instead of holding the worker', async () => {
    const patient = railFor(chain, 10_000);
    const instruction = payout(wallet(chain));
    const checkpoint = new MemoryCheckpoint();
    chain.dropNextSends(1);
    // Expire the blockhash 100 ms after the transaction was signed and saved, while the rail waits.
    // (A timer started before `pay` raced the rail's own RPC calls on a loaded machine: expiring
    // before the blockhash was read left a fresh one, and the wait ran its full 10 s.)
    let expiring: NodeJS.Timeout | undefined;
    let savedAt = 0;
    const save = checkpoint.save.bind(checkpoint);
    checkpoint.save = async (state) => {
      await save(state);
      savedAt = Date.now();
      expiring = setTimeout(() => chain.expireBlockhash(), 100);
    };
    const outcome = await patient.pay(instruction, checkpoint);
    clearTimeout(expiring);
    expect(outcome).toEqual({ kind: 'pending', externalId: signatureIn(checkpoint) });
    expect(Date.now() - savedAt).toBeLessThan(5_000); // not the 10 s confirmation timeout
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
    // The local chain's mint is devnet USDC's address (x402, docs/x402.md), which is off the curve,
    // so it is refused as no wallet at all, before the mint check; either way nothing is sent.
    expect(await rail.pay(payout(chain.mint), checkpoint)).toEqual({
      kind: 'failed',
      reason: expect.stringMatching(/^(destination is the USDC mint|invalid solana address)$/),
    });
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

describe('Solana rail creating the token account a payout paid for (createTokenAccount)', () => {
  let chain: LocalSolana;
  let rail: SolanaRail;
  /** The priority fee on the limit a creating transaction requests. */
  const CREATING_FEE = 5_000n + BigInt(priorityFeeLamports(LIMIT + TOKEN_ACCOUNT_CREATION_COMPUTE_UNITS, PRICE));

  beforeAll(async () => {
    chain = await startLocalSolana();
    rail = railFor(chain);
  });
  afterAll(async () => {
    await chain.stop();
  });

  const programsOf = (base64Tx: unknown) =>
    Transaction.from(Buffer.from(String(base64Tx), 'base64')).instructions.map((ix) => ix.programId.toBase58());

  it('creates the missing account and pays the net in ONE transaction: the hot wallet pays the rent and the fee', async () => {
    const destination = Keypair.generate().publicKey.toBase58();
    const hot = chain.hotWallet.publicKey;
    const [usdcBefore, solBefore] = [chain.tokenBalance(hot), chain.lamports(hot)];
    const checkpoint = new MemoryCheckpoint();
    const instruction = creatingPayout(destination);

    const outcome = await rail.pay(instruction, checkpoint);

    const signature = signatureIn(checkpoint);
    expect(outcome).toEqual({ kind: 'completed', externalId: signature, txHash: signature });
    expect(chain.tokenAccountExists(destination)).toBe(true);
    expect(chain.tokenBalance(destination)).toBe(BigInt(NET));
    expect(usdcBefore - chain.tokenBalance(hot)).toBe(BigInt(NET));
    expect(solBefore - chain.lamports(hot)).toBe(CREATING_FEE + TOKEN_ACCOUNT_RENT);
    expect(transfersOf(chain, instruction.payoutId)).toEqual([expect.objectContaining({ signature, err: null })]);
    // Budget, memo, the idempotent create, then the transfer; the limit carries the creation's units.
    const compute = ComputeBudgetProgram.programId.toBase58();
    expect(programsOf(checkpoint.saved?.tx)).toEqual([
      compute,
      compute,
      MEMO_PROGRAM_ID.toBase58(),
      ASSOCIATED_TOKEN_PROGRAM_ID.toBase58(),
      TOKEN_PROGRAM_ID.toBase58(),
    ]);
    expect(budgetOf(checkpoint.saved?.tx).units).toBe(LIMIT + TOKEN_ACCOUNT_CREATION_COMPUTE_UNITS);
  });

  it('an account that exists by then (the agent made it meanwhile): the create does nothing, no rent is paid, the net arrives', async () => {
    const destination = wallet(chain);
    const hot = chain.hotWallet.publicKey;
    const solBefore = chain.lamports(hot);

    expect((await rail.pay(creatingPayout(destination), new MemoryCheckpoint())).kind).toBe('completed');

    expect(chain.tokenBalance(destination)).toBe(BigInt(NET));
    expect(solBefore - chain.lamports(hot)).toBe(CREATING_FEE);
  });

  it('crash after sending the create and transfer: the redelivery finds it landed, signs nothing, creates and pays once', async () => {
    const destination = Keypair.generate().publicKey.toBase58();
    const instruction = creatingPayout(destination);
    const checkpoint = new MemoryCheckpoint();
    chain.failNext('getSignatureStatuses');

    await expect(rail.pay(instruction, checkpoint)).rejects.toBeInstanceOf(RailUnavailableError);
    expect(transfersOf(chain, instruction.payoutId)).toHaveLength(1);

    const again = checkpoint.redeliver();
    expect(await rail.pay(instruction, again)).toMatchObject({ kind: 'completed', externalId: signatureIn(checkpoint) });
    expect(again.saves).toHaveLength(0);
    expect(transfersOf(chain, instruction.payoutId)).toHaveLength(1);
    expect(chain.tokenBalance(destination)).toBe(BigInt(NET));
  });

  it('a dropped create and transfer whose blockhash expired is signed anew, create included: one lands, rent paid once', async () => {
    const destination = Keypair.generate().publicKey.toBase58();
    const hot = chain.hotWallet.publicKey;
    const instruction = creatingPayout(destination);
    const checkpoint = new MemoryCheckpoint();
    chain.dropNextSends(1);
    expect((await rail.pay(instruction, checkpoint)).kind).toBe('pending');
    expect(chain.tokenAccountExists(destination)).toBe(false);
    const first = signatureIn(checkpoint);

    chain.expireBlockhash();
    const solBefore = chain.lamports(hot);
    const again = checkpoint.redeliver();
    const outcome = await rail.pay(instruction, again);

    const renewed = signatureIn(again);
    expect(renewed).not.toBe(first);
    expect(outcome).toEqual({ kind: 'completed', externalId: renewed, txHash: renewed });
    expect(programsOf(again.saved?.tx)).toContain(ASSOCIATED_TOKEN_PROGRAM_ID.toBase58());
    expect(transfersOf(chain, instruction.payoutId).map((t) => t.signature)).toEqual([renewed]);
    expect(chain.tokenBalance(destination)).toBe(BigInt(NET));
    expect(solBefore - chain.lamports(hot)).toBe(CREATING_FEE + TOKEN_ACCOUNT_RENT);
  });

  it('never creates an account for a payout that did not pay for one', async () => {
    const destination = Keypair.generate().publicKey.toBase58();
    expect(await rail.pay(payout(destination), new MemoryCheckpoint())).toEqual({ kind: 'failed', reason: NO_TOKEN_ACCOUNT });
    expect(chain.tokenAccountExists(destination)).toBe(false);
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

describe('Solana rail when the hot wallet runs short of SOL', () => {
  /** Just enough for the old check (rent-exempt minimum + 20,000 reserve), not for the priority fee too. */
  const BASE_ONLY = RENT_EXEMPT + 20_000n + 10_000n;
  let chain: LocalSolana;

  beforeAll(async () => {
    chain = await startLocalSolana({ hotWalletLamports: BASE_ONLY });
  });
  afterAll(async () => {
    await chain.stop();
  });

  it('throws PlatformFundsError before signing when the SOL covers the base fee but not the priority fee', async () => {
    // 40,000 units at the cap, 1,000,000 micro-lamports each: a 40,000-lamport priority fee.
    const costly = railFor(chain, 200, { priorityFeeMicroLamports: 1_000_000, computeUnitLimit: 40_000 });
    const checkpoint = new MemoryCheckpoint();
    const error = await costly.pay(payout(wallet(chain)), checkpoint).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformFundsError);
    expect(String((error as Error).message)).toMatch(/priority fee 40000/);
    expect(checkpoint.saves).toHaveLength(0);
  });

  it('throws PlatformFundsError when paying the fee would leave the hot wallet below its rent-exempt minimum', async () => {
    // The cluster refuses such a transaction outright: it would never land, and the payout would
    // stay pending through expiry after expiry with no alarm.
    const drained = await startLocalSolana({ hotWalletLamports: RENT_EXEMPT + 3_000n });
    try {
      const checkpoint = new MemoryCheckpoint();
      await expect(railFor(drained).pay(payout(wallet(drained)), checkpoint)).rejects.toBeInstanceOf(PlatformFundsError);
      expect(checkpoint.saves).toHaveLength(0);
    } finally {
      await drained.stop();
    }
  });

  it("throws PlatformFundsError before signing when the SOL covers the fee but not a new token account's rent", async () => {
    const checkpoint = new MemoryCheckpoint();
    const destination = Keypair.generate().publicKey.toBase58();
    const error = await railFor(chain)
      .pay(creatingPayout(destination), checkpoint)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformFundsError);
    expect(String((error as Error).message)).toMatch(/token account rent 2039280/);
    expect(checkpoint.saves).toHaveLength(0);
    expect(chain.tokenAccountExists(destination)).toBe(false);
  });

  it('pays when the SOL covers rent-exempt minimum, reserve and priority fee', async () => {
    const cheap = railFor(chain, 200, { priorityFeeMicroLamports: 250_000, computeUnitLimit: 40_000 }); // 10,000 lamports
    expect((await cheap.pay(payout(wallet(chain)), new MemoryCheckpoint())).kind).toBe('completed');
  });
});
