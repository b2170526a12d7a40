/**
 * USDC payouts on Solana. One legacy transaction per attempt: a memo naming the payout and a
 * `transferChecked` of the net amount from the hot wallet's associated token account (ATA) into the
 * destination's ATA. The hot wallet pays the fee, so the destination receives exactly the net amount.
 *
 * The destination's ATA is created only for a payout that paid for it (`createTokenAccount`: the
 * agent asked, and the withdrawal was charged ACCOUNT_CREATION_FEE, docs/payouts.md). Its
 * transaction then carries an idempotent create (`CreateIdempotent` of the ATA program: creates
 * the account, or checks the existing one and does nothing) before the transfer, in the SAME
 * transaction: both land or neither does, so the exactly-once argument below covers the creation
 * too, and a failed transaction never leaves rent spent on an account nobody was paid into. Any
 * other payout to a wallet without an ATA is `failed` (and refunded) before anything is signed:
 * creating it would cost the hot wallet the account's rent (~0.00204 SOL, more than the platform
 * fee on a small payout), and the owner can close the account, keep the rent and withdraw again, a
 * loop that drains the hot wallet; the creation fee is what makes that loop cost the agent, not us.
 * Without a create instruction, an ATA closed between the check and landing makes the transfer
 * fail on chain (a 5,000-lamport fee, no tokens moved), never a rent payment.
 *
 * Exactly once rests on three properties of the chain and one rule of ours:
 *  1. a signed transaction is named by its signature, and the same bytes can land at most once;
 *  2. a transaction whose blockhash is past its `lastValidBlockHeight` can never land;
 *  3. a transaction that landed with an error moved no tokens (and is final only at `finalized`:
 *     below it, its block may be dropped and the same bytes land elsewhere, so no refund before);
 *  rule: the signature, its `lastValidBlockHeight` and the signed bytes are saved through the
 *  checkpoint BEFORE they are sent.
 * On a call with a checkpoint the saved signature is looked up first. Landed → its result. Not
 * landed and still valid → the same bytes are sent again. Only when the *finalized* block height
 * is past `lastValidBlockHeight` (read with its slot, one call) and the signature is still unknown
 * to a node whose context slot has reached that finalized slot is a new transaction signed: the
 * RPC URL may be a load balancer, and a lagging node's "unknown" proves nothing. So at most one
 * transaction of a payout can ever land: the one in the checkpoint.
 *
 * Fees: two ComputeBudget instructions come first, a compute-unit limit and a price (the priority
 * fee, micro-lamports per requested unit), from SOLANA_COMPUTE_UNIT_LIMIT and
 * SOLANA_PRIORITY_FEE_MICROLAMPORTS. They are part of the signed bytes saved in the checkpoint, so a
 * re-send pays exactly the fee that was signed; a new signature (after expiry) takes the price
 * configured then. The exactly-once argument above does not depend on the instructions at all.
 *
 * The memo makes every payout's transaction unique: without it, two payouts of the same amount to
 * the same wallet built on the same blockhash would be byte-identical, and the second would find
 * the first one's signature on chain and be marked paid without paying.
 *
 * The key is not here: the rail builds the transaction with the hot wallet as fee payer and
 * authority, and the hot-wallet signer (./hot-wallet-signer.ts, DESIGN §24) checks the message
 * against the payout (the transfer, its amount and destination, the memo, the fee caps) and returns
 * the signature, which is verified here before anything is saved or sent.
 *
 * Only this module imports @solana/*, so only the bundles that pay (worker, reconciler) carry it.
 */
import {
  ACCOUNT_SIZE,
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  ExtensionType,
  getAccountLen,
  getAccountTypeOfMintType,
  getAssociatedTokenAddressSync,
  getExtensionTypes,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  unpackAccount,
  unpackMint,
} from '@solana/spl-token';
import {
  ComputeBudgetProgram,
  Connection,
  Keypair,
  PublicKey,
  type SignatureStatus,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import * as z from 'zod';
import { config, MAX_SOLANA_COMPUTE_UNIT_LIMIT, MAX_SOLANA_PRIORITY_FEE_MICROLAMPORTS, MIN_SOLANA_COMPUTE_UNIT_LIMIT } from '../config';
import { isCurrencyOn } from '../core/money';
import { isPayableWalletKey, solanaAddressBytes } from '../core/withdrawals';
import { PAYOUT_FAILURE_REASONS } from '../messages/catalogue';
import { CheckpointError, PlatformFundsError, RailConfigError, RailUnavailableError } from './errors';
import { type HotWalletSigner, hotWalletSigner } from './hot-wallet-signer';
import type { PayoutInstruction, PayoutRail, RailCheckpoint, RailOutcome, RailState } from './rail';

export const USDC_DECIMALS = 6;
/** SPL Memo v2. Its instruction with no accounts just records the text in the transaction. */
export const MEMO_PROGRAM_ID = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
/** What a payout to a wallet without a USDC token account answers (the agent reads it): the withdraw
 * API refuses such a wallet up front, so this is an account closed after the withdrawal was accepted. */
export const NO_TOKEN_ACCOUNT = PAYOUT_FAILURE_REASONS.noTokenAccount;
/** Compute units added to the limit of a transaction that creates the destination's token account:
 * the ATA program's create (system account creation, token account initialisation) is reported at
 * ~20,000-30,000 units with the classic programs on mainnet, far above the transfer's (docs/rails.md). */
export const TOKEN_ACCOUNT_CREATION_COMPUTE_UNITS = 40_000;
/** Lamports kept back for the base fee (5,000 per signature today) with a margin; the priority fee
 * and the hot wallet's own rent-exempt minimum come on top (see `signAndSend`). */
const FEE_RESERVE_LAMPORTS = 20_000;
/** Status lookups one call makes for a node that has caught up with the finalized tip before it
 * answers `pending` (the reconciler asks again later): a node behind a load balancer lags briefly. */
const STATUS_READS = 3;

/** What the priority fee of one transaction costs: limit × price micro-lamports, rounded up to whole
 * lamports as the runtime charges it (on the requested limit, not on the units used). */
export function priorityFeeLamports(computeUnitLimit: number, microLamportsPerUnit: number): number {
  return Number((BigInt(computeUnitLimit) * BigInt(microLamportsPerUnit) + 999_999n) / 1_000_000n);
}

export type SolanaCommitment = 'processed' | 'confirmed' | 'finalized';

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

/** What is saved before a transaction is sent. `tx` is the signed transaction, base64. */
const savedSchema = z.object({
  rail: z.literal('solana'),
  signature: z.string().min(64).max(88),
  lastValidBlockHeight: z.number().int().nonnegative(),
  tx: z.string().min(1),
  attempt: z.number().int().positive(),
});
type SolanaCheckpoint = z.infer<typeof savedSchema>;

interface Ready {
  connection: Connection;
  /** The hot wallet's address, as its signer answers it. */
  hotWallet: PublicKey;
  mint: PublicKey;
  tokenProgram: PublicKey;
  hotAta: PublicKey;
  /** The hot wallet (a system account) must keep this much after paying a fee, or its
   * transactions are refused (a rent-exempt account may not become rent-paying). */
  hotWalletRentExempt: number;
  /** Bytes of a token account of this mint as the ATA program creates it (its rent is what a
   * creation costs the hot wallet): 165 for SPL Token; Token-2022 adds ImmutableOwner and whatever
   * the mint's extensions require. */
  tokenAccountSize: number;
}

const COMMITMENT_RANK: Record<SolanaCommitment, number> = { processed: 0, confirmed: 1, finalized: 2 };

export class SolanaRail implements PayoutRail {
  private ready: Promise<Ready> | undefined;
  /** The rent-exempt minimum of a new token account, read on the first creation (then kept). */
  private tokenAccountRent: Promise<number> | undefined;
  private readonly confirmTimeoutMs: number;
  private readonly pollIntervalMs: number;
  private readonly rpcTimeoutMs: number;

  constructor(private readonly options: SolanaRailOptions = {}) {
    this.confirmTimeoutMs = options.confirmTimeoutMs ?? 30_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
    this.rpcTimeoutMs = options.rpcTimeoutMs ?? 10_000;
    const { priorityFeeMicroLamports: price, computeUnitLimit: limit } = options;
    // The config module enforces the same bounds; this catches a rail built by hand.
    if (price !== undefined && !inRange(price, 0, MAX_SOLANA_PRIORITY_FEE_MICROLAMPORTS)) {
      throw new RailConfigError(`priority fee must be a whole number of micro-lamports from 0 to ${MAX_SOLANA_PRIORITY_FEE_MICROLAMPORTS}`);
    }
    if (limit !== undefined && !inRange(limit, MIN_SOLANA_COMPUTE_UNIT_LIMIT, MAX_SOLANA_COMPUTE_UNIT_LIMIT)) {
      throw new RailConfigError(
        `compute unit limit must be a whole number from ${MIN_SOLANA_COMPUTE_UNIT_LIMIT} to ${MAX_SOLANA_COMPUTE_UNIT_LIMIT}`,
      );
    }
  }

  async pay(instruction: PayoutInstruction, checkpoint: RailCheckpoint): Promise<RailOutcome> {
    if (!isCurrencyOn(instruction.currency, 'solana'))
      return { kind: 'failed', reason: PAYOUT_FAILURE_REASONS.wrongCurrency('solana', 'USDC', instruction.currency) };
    if (!Number.isSafeInteger(instruction.netAmount) || instruction.netAmount <= 0) {
      return { kind: 'failed', reason: PAYOUT_FAILURE_REASONS.netAmountNotWhole('micro-USDC') };
    }
    const owner = walletAddress(instruction.destination);
    if (!owner) return { kind: 'failed', reason: PAYOUT_FAILURE_REASONS.invalidSolanaAddress };
    const saved = readCheckpoint(checkpoint.saved);
    const ready = await this.init();
    if (owner.equals(ready.hotWallet)) return { kind: 'failed', reason: PAYOUT_FAILURE_REASONS.destinationIsHotWallet };
    if (owner.equals(ready.mint)) return { kind: 'failed', reason: PAYOUT_FAILURE_REASONS.destinationIsMint };

    if (!saved) return this.signAndSend(ready, instruction, owner, checkpoint, 1);

    // The finalized tip first, its slot and its block height from one call (one node's finalized
    // bank, one moment): if that height is past the blockhash's last valid height, every block
    // that could hold the transaction is at or below that finalized slot.
    const tip = await this.rpc('getEpochInfo', () => ready.connection.getEpochInfo('finalized'));
    // Every node since 1.x fills it; without it nothing here can be decided, so no guess.
    if (tip.blockHeight === undefined) throw new RailUnavailableError('solana rpc getEpochInfo answered no block height');
    const first = await this.statusAt(ready, saved.signature);
    if (first.status) return this.awaitOutcome(ready, saved, first.status);
    if (tip.blockHeight <= saved.lastValidBlockHeight) {
      // Maybe never sent (crash after the save), maybe dropped: the same bytes, so at most once.
      // Not for a payout that may not be paid now (its agent was disabled): what was sent may
      // still land and is waited for, nothing more is sent; once it can never land, it is held.
      if (await mayPay(instruction)) await this.broadcast(ready, saved.tx);
      return this.awaitOutcome(ready, saved, null);
    }
    // Expired. "Unknown" proves it never landed only from a node that has processed that finalized
    // slot: the RPC URL may be a load balancer, and a lagging node has not seen the newest blocks,
    // the one holding our transaction perhaps. Its answer's context slot says how far it has got.
    const seen = await this.statusSeenFrom(ready, saved.signature, tip.absoluteSlot, first);
    if (seen === 'lagging') return { kind: 'pending', externalId: saved.signature };
    if (seen.status) return this.awaitOutcome(ready, saved, seen.status);
    // Unknown to a node at least as recent as a finalized slot past its last valid height: the
    // saved transaction never landed and never can. Only now is it safe to sign anew.
    return this.signAndSend(ready, instruction, owner, checkpoint, saved.attempt + 1);
  }

  /** The hot wallet's SOL, in lamports (it pays every payout's fee and the rent of the accounts payouts create). */
  async hotWalletLamports(): Promise<number> {
    const ready = await this.init();
    return this.rpc('getBalance', () => ready.connection.getBalance(ready.hotWallet));
  }

  /**
   * The status lookup of `first` (or another, up to STATUS_READS in all, a poll interval apart)
   * made by a node whose context slot is at least `slot`; 'lagging' when every node asked was
   * behind it. A status found by a lagging node counts (it landed), its "unknown" does not.
   */
  private async statusSeenFrom(
    ready: Ready,
    signature: string,
    slot: number,
    first: { status: SignatureStatus | null; contextSlot: number },
  ): Promise<{ status: SignatureStatus | null } | 'lagging'> {
    let answer = first;
    for (let read = 1; ; read++) {
      if (answer.status || answer.contextSlot >= slot) return answer;
      if (read >= STATUS_READS) return 'lagging';
      await sleep(this.pollIntervalMs);
      answer = await this.statusAt(ready, signature);
    }
  }

  private async signAndSend(
    ready: Ready,
    instruction: PayoutInstruction,
    owner: PublicKey,
    checkpoint: RailCheckpoint,
    attempt: number,
  ): Promise<RailOutcome> {
    const { connection, hotWallet, mint, tokenProgram, hotAta, hotWalletRentExempt } = ready;
    const destinationAta = getAssociatedTokenAddressSync(mint, owner, false, tokenProgram);
    // Only a payout that paid the account-creation fee creates the account (see the file header).
    const create = instruction.createTokenAccount === true;
    const [hotAtaInfo, destinationInfo, lamports] = await Promise.all([
      this.rpc('getAccountInfo', () => connection.getAccountInfo(hotAta)),
      this.rpc('getAccountInfo', () => connection.getAccountInfo(destinationAta)),
      this.rpc('getBalance', () => connection.getBalance(hotWallet)),
    ]);

    // No rent for a token account nobody paid for (see the file header): the agent creates it, or
    // withdraws with createTokenAccount and pays the creation fee.
    if (!destinationInfo && !create) return { kind: 'failed', reason: NO_TOKEN_ACCOUNT };
    if (destinationInfo) {
      const account = tryUnpackAccount(destinationAta, destinationInfo, tokenProgram);
      if (!account) return { kind: 'failed', reason: PAYOUT_FAILURE_REASONS.notATokenAccount };
      if (account.isFrozen) return { kind: 'failed', reason: PAYOUT_FAILURE_REASONS.tokenAccountFrozen };
    }

    // Checks before signing spare a fee on a transaction bound to fail. The chain stays the
    // authority: if funds move between here and landing, the transaction lands with an error.
    const available = hotAtaInfo ? unpackAccount(hotAta, hotAtaInfo, tokenProgram).amount : 0n;
    if (available < BigInt(instruction.netAmount)) {
      throw new PlatformFundsError(`hot wallet holds ${available} micro-USDC, payout needs ${instruction.netAmount}`);
    }
    const budget = this.computeBudget();
    const computeUnitLimit = budget.computeUnitLimit + (create ? TOKEN_ACCOUNT_CREATION_COMPUTE_UNITS : 0);
    const { priorityFeeMicroLamports } = budget;
    const priorityFee = priorityFeeLamports(computeUnitLimit, priorityFeeMicroLamports);
    // A transaction that carries the create may spend the new account's rent (nothing, when the
    // account exists by the time it lands): counted whenever the create is in it.
    const rent = create ? await this.newTokenAccountRent(ready) : 0;
    // The fee payer must stay rent-exempt after the fee: below that the cluster refuses the
    // transaction outright (it never lands), which would keep the payout pending without an alarm.
    const needed = hotWalletRentExempt + FEE_RESERVE_LAMPORTS + priorityFee + rent;
    if (lamports < needed) {
      throw new PlatformFundsError(
        `hot wallet holds ${lamports} lamports, payout needs ${needed} (rent-exempt minimum ${hotWalletRentExempt}, ` +
          `fee reserve ${FEE_RESERVE_LAMPORTS}, priority fee ${priorityFee}` +
          (create ? `, token account rent ${rent})` : ')'),
      );
    }

    // Last word before a signature: the agent may have been disabled since the withdrawal, or
    // since this attempt began (docs/payouts.md, "Held payouts"). Nothing signed, nothing held back.
    if (!(await mayPay(instruction))) return { kind: 'held' };
    const { blockhash, lastValidBlockHeight } = await this.rpc('getLatestBlockhash', () =>
      connection.getLatestBlockhash(this.commitment()),
    );
    const tx = new Transaction({ feePayer: hotWallet, blockhash, lastValidBlockHeight });
    tx.add(
      // First, and inside the signed bytes saved below: a re-send pays the fee that was signed.
      ComputeBudgetProgram.setComputeUnitLimit({ units: computeUnitLimit }),
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: priorityFeeMicroLamports }),
      new TransactionInstruction({ programId: MEMO_PROGRAM_ID, keys: [], data: Buffer.from(`payout:${instruction.payoutId}`, 'utf8') }),
      // Paid for by the agent (createTokenAccount): creates the account, or does nothing if it exists.
      ...(create ? [createAssociatedTokenAccountIdempotentInstruction(hotWallet, destinationAta, owner, mint, tokenProgram)] : []),
      createTransferCheckedInstruction(
        hotAta,
        mint,
        destinationAta,
        hotWallet,
        BigInt(instruction.netAmount),
        USDC_DECIMALS,
        [],
        tokenProgram,
      ),
    );
    // The signer checks the message against this payout before it signs (functions/signer/payout-message.ts).
    const signature = await this.signer().sign({
      kind: 'payout',
      payout: {
        payoutId: instruction.payoutId,
        destination: instruction.destination,
        netAmount: instruction.netAmount,
        createTokenAccount: create,
      },
      message: tx.serializeMessage().toString('base64'),
    });
    tx.addSignature(hotWallet, Buffer.from(bs58.decode(signature)));
    if (!tx.signature) throw new Error('transaction has no signature after signing');
    const saved: SolanaCheckpoint = {
      rail: 'solana',
      signature: bs58.encode(tx.signature),
      lastValidBlockHeight,
      // serialize() verifies the signature against the message: a wrong one never leaves this process.
      tx: tx.serialize().toString('base64'),
      attempt,
    };
    // The one rule: persisted before the bytes leave this process.
    await checkpoint.save(saved);
    await this.broadcast(ready, saved.tx);
    return this.awaitOutcome(ready, saved, null);
  }

  /** Sends signed bytes. No preflight: the outcome is read from the chain, never from a simulation. */
  private async broadcast(ready: Ready, base64Tx: string): Promise<void> {
    await this.rpc('sendTransaction', () =>
      ready.connection.sendRawTransaction(Buffer.from(base64Tx, 'base64'), { skipPreflight: true, preflightCommitment: this.commitment() }),
    );
  }

  /** Polls the signature until it reaches the configured commitment, fails, or time runs out. */
  private async awaitOutcome(ready: Ready, saved: SolanaCheckpoint, first: SignatureStatus | null): Promise<RailOutcome> {
    const deadline = Date.now() + this.confirmTimeoutMs;
    let status = first ?? (await this.status(ready, saved.signature, false));
    for (;;) {
      if (status?.err) {
        // Landed with an error: it moved no tokens and, once finalized, can never land again. Below
        // finalized the block holding it may sit on a fork that is dropped, and the same bytes can
        // then land elsewhere and pay: a refund now could pay and refund. So wait (or `pending`).
        if (reached(status, 'finalized')) {
          return { kind: 'failed', reason: PAYOUT_FAILURE_REASONS.failedOnChain(JSON.stringify(status.err)), externalId: saved.signature };
        }
      } else if (status && reached(status, this.commitment())) {
        return { kind: 'completed', externalId: saved.signature, txHash: saved.signature };
      }
      if (!status) {
        // Unknown to the chain and past its blockhash's last valid height: it can never land, so
        // waiting out the timeout would only hold the worker. The next attempt re-checks at
        // finalized height (see pay) and only then signs anew.
        const height = await this.rpc('getBlockHeight', () => ready.connection.getBlockHeight(this.commitment()));
        if (height > saved.lastValidBlockHeight) return { kind: 'pending', externalId: saved.signature };
      }
      if (Date.now() + this.pollIntervalMs > deadline) return { kind: 'pending', externalId: saved.signature };
      await sleep(this.pollIntervalMs);
      status = await this.status(ready, saved.signature, false);
    }
  }

  private async status(ready: Ready, signature: string, searchTransactionHistory: boolean): Promise<SignatureStatus | null> {
    return (await this.statusAt(ready, signature, searchTransactionHistory)).status;
  }

  /** A signature's status (searching the node's history by default), and the slot the answering node had reached. */
  private async statusAt(
    ready: Ready,
    signature: string,
    searchTransactionHistory = true,
  ): Promise<{ status: SignatureStatus | null; contextSlot: number }> {
    const res = await this.rpc('getSignatureStatuses', () =>
      ready.connection.getSignatureStatuses([signature], { searchTransactionHistory }),
    );
    return { status: res.value[0] ?? null, contextSlot: res.context.slot };
  }

  /** The rent-exempt minimum of a token account of this mint, asked once (a creation pays it). */
  private newTokenAccountRent(ready: Ready): Promise<number> {
    this.tokenAccountRent ??= this.rpc('getMinimumBalanceForRentExemption', () =>
      ready.connection.getMinimumBalanceForRentExemption(ready.tokenAccountSize),
    ).catch((error: unknown) => {
      this.tokenAccountRent = undefined;
      throw error;
    });
    return this.tokenAccountRent;
  }

  private signer(): HotWalletSigner {
    return this.options.signer ?? hotWalletSigner();
  }

  private commitment(): SolanaCommitment {
    return this.options.commitment ?? config().SOLANA_COMMITMENT;
  }

  private computeBudget(): { computeUnitLimit: number; priorityFeeMicroLamports: number } {
    return {
      computeUnitLimit: this.options.computeUnitLimit ?? config().SOLANA_COMPUTE_UNIT_LIMIT,
      priorityFeeMicroLamports: this.options.priorityFeeMicroLamports ?? config().SOLANA_PRIORITY_FEE_MICROLAMPORTS,
    };
  }

  /** Connection, hot wallet and mint, once per container (retried on the next call if it failed). */
  private init(): Promise<Ready> {
    this.ready ??= this.load().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  private async load(): Promise<Ready> {
    const rpcUrl = this.options.rpcUrl ?? config().SOLANA_RPC_URL;
    const mintText = this.options.mint ?? config().USDC_MINT;
    if (!rpcUrl) throw new RailConfigError('SOLANA_RPC_URL is not set');
    if (!mintText) throw new RailConfigError('USDC_MINT is not set');
    const mint = walletAddress(mintText, false);
    if (!mint) throw new RailConfigError('USDC_MINT is not a Solana address');
    const hotWallet = walletAddress(await this.signer().sign({ kind: 'address' }), false);
    if (!hotWallet) throw new RailConfigError("the hot-wallet signer's address is not a Solana address");

    const timeoutMs = this.rpcTimeoutMs;
    const connection = new Connection(rpcUrl, {
      commitment: this.commitment(),
      disableRetryOnRateLimit: true,
      fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) }),
    });
    const mintInfo = await this.rpc('getAccountInfo', () => connection.getAccountInfo(mint));
    if (!mintInfo) throw new RailConfigError('USDC_MINT does not exist on this cluster');
    const tokenProgram = mintInfo.owner;
    if (!tokenProgram.equals(TOKEN_PROGRAM_ID) && !tokenProgram.equals(TOKEN_2022_PROGRAM_ID)) {
      throw new RailConfigError('USDC_MINT is not owned by a token program');
    }
    const mintState = unpackMint(mint, mintInfo, tokenProgram);
    const decimals = mintState.decimals;
    if (decimals !== USDC_DECIMALS) throw new RailConfigError(`USDC_MINT has ${decimals} decimals, expected ${USDC_DECIMALS}`);
    // What the ATA program allocates: Token-2022 always adds ImmutableOwner, plus what the mint's
    // extensions require of its accounts (e.g. a transfer-fee amount).
    const tokenAccountSize = tokenProgram.equals(TOKEN_2022_PROGRAM_ID)
      ? getAccountLen([...getExtensionTypes(mintState.tlvData).map(getAccountTypeOfMintType), ExtensionType.ImmutableOwner])
      : ACCOUNT_SIZE;
    const hotAta = getAssociatedTokenAddressSync(mint, hotWallet, false, tokenProgram);
    const hotWalletRentExempt = await this.rpc('getMinimumBalanceForRentExemption', () => connection.getMinimumBalanceForRentExemption(0));
    return { connection, hotWallet, mint, tokenProgram, hotAta, hotWalletRentExempt, tokenAccountSize };
  }

  private async rpc<T>(method: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw new RailUnavailableError(`solana rpc ${method} failed`, { cause: error });
    }
  }
}

/**
 * A wallet address a payout may go to: base58 of 32 bytes and, unless `wallet` is false, a key a
 * wallet can hold (on the ed25519 curve, not of small order, not a well-known program or sysvar):
 * tokens sent to any other address's "ATA" could never be spent. `wallet: false` reads any address
 * (the mint).
 */
export function walletAddress(text: string, wallet = true): PublicKey | undefined {
  // One definition of a valid destination, shared with the withdraw API (functions/core).
  const bytes = solanaAddressBytes(text);
  if (!bytes || (wallet && !isPayableWalletKey(bytes))) return undefined;
  return new PublicKey(bytes);
}

/** A 64-byte secret key given as base58 or as a JSON byte array (the Solana CLI's key file format). */
export function parseSecretKey(text: string): Keypair {
  const trimmed = text.trim();
  let bytes: Uint8Array;
  try {
    if (trimmed.startsWith('[')) {
      const parsed = z.array(z.number().int().min(0).max(255)).safeParse(JSON.parse(trimmed));
      if (!parsed.success) throw new Error('not a byte array');
      bytes = Uint8Array.from(parsed.data);
    } else {
      bytes = bs58.decode(trimmed);
    }
  } catch {
    // Never echo the input or a parser message quoting it: it is the hot wallet's key.
    throw new RailConfigError('hot wallet secret is neither base58 nor a JSON byte array');
  }
  if (bytes.length !== 64) throw new RailConfigError(`hot wallet secret must be 64 bytes, got ${bytes.length}`);
  try {
    return Keypair.fromSecretKey(bytes);
  } catch {
    throw new RailConfigError('hot wallet secret is not a valid ed25519 key pair');
  }
}

function readCheckpoint(saved: RailState | undefined): SolanaCheckpoint | undefined {
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

function tryUnpackAccount(address: PublicKey, info: Parameters<typeof unpackAccount>[1], program: PublicKey) {
  try {
    return unpackAccount(address, info, program);
  } catch {
    return undefined;
  }
}

function reached(status: SignatureStatus, wanted: SolanaCommitment): boolean {
  // `confirmations: null` means rooted (finalized) on nodes that omit confirmationStatus.
  const actual: SolanaCommitment = status.confirmationStatus ?? (status.confirmations === null ? 'finalized' : 'processed');
  return COMMITMENT_RANK[actual] >= COMMITMENT_RANK[wanted];
}

function inRange(n: number, min: number, max: number): boolean {
  return Number.isSafeInteger(n) && n >= min && n <= max;
}

/** The payout's `mayPay` (absent: it may). Not an RPC call: its errors pass through unchanged. */
function mayPay(instruction: PayoutInstruction): Promise<boolean> {
  return instruction.mayPay ? instruction.mayPay() : Promise.resolve(true);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
