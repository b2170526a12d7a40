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
 * The rail's parts, each a file: the connection and RPC calls (solana.connection.ts), the saved
 * state (solana.checkpoint.ts), the transaction's instructions and constants (solana.keys.ts).
 * Only these modules import @solana/*, so only the bundles that pay (worker, reconciler, signer) carry it.
 */
import { getAssociatedTokenAddressSync, unpackAccount } from '@solana/spl-token';
import { type PublicKey, type SignatureStatus, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { config } from '../config';
import { isCurrencyOn } from '../core/money';
import { PAYOUT_FAILURE_REASONS } from '../messages/problems';
import { PlatformFundsError, RailUnavailableError } from './errors';
import { type HotWalletSigner, hotWalletSigner } from './hot-wallet-signer';
import type { PayoutInstruction, PayoutRail, RailCheckpoint, RailOutcome } from './rail';
import { readCheckpoint, type SolanaCheckpoint } from './solana.checkpoint';
import { connectRail, type Ready, reached, type SolanaCommitment, sleep, solanaCall, statusAt, statusSeenFrom } from './solana.connection';
import {
  NO_TOKEN_ACCOUNT,
  type PayoutTransfer,
  payoutInstructions,
  priorityFeeLamports,
  TOKEN_ACCOUNT_CREATION_COMPUTE_UNITS,
  tryUnpackAccount,
  walletAddress,
} from './solana.keys';
import { checkFeeBounds, type SolanaRailOptions } from './solana.options';

// The payout's parts, read where the rail was always read (the signer, the tests).
export {
  MEMO_PROGRAM_ID,
  NO_TOKEN_ACCOUNT,
  parseSecretKey,
  priorityFeeLamports,
  TOKEN_ACCOUNT_CREATION_COMPUTE_UNITS,
  USDC_DECIMALS,
  walletAddress,
} from './solana.keys';
export type { SolanaRailOptions } from './solana.options';

/** Lamports kept back for the base fee (5,000 per signature today) with a margin; the priority fee
 * and the hot wallet's own rent-exempt minimum come on top (see `plan`). */
const FEE_RESERVE_LAMPORTS = 20_000;

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
    // The config module enforces the same bounds; this catches a rail built by hand.
    checkFeeBounds(options);
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
    const tip = await solanaCall('getEpochInfo', () => ready.connection.getEpochInfo('finalized'));
    // Every node since 1.x fills it; without it nothing here can be decided, so no guess.
    if (tip.blockHeight === undefined) throw new RailUnavailableError('solana rpc getEpochInfo answered no block height');
    const first = await statusAt(ready.connection, saved.signature);
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
    const seen = await statusSeenFrom(ready.connection, saved.signature, tip.absoluteSlot, first, this.pollIntervalMs);
    if (seen === 'lagging') return { kind: 'pending', externalId: saved.signature };
    if (seen.status) return this.awaitOutcome(ready, saved, seen.status);
    // Unknown to a node at least as recent as a finalized slot past its last valid height: the
    // saved transaction never landed and never can. Only now is it safe to sign anew.
    return this.signAndSend(ready, instruction, owner, checkpoint, saved.attempt + 1);
  }

  /** The hot wallet's SOL, in lamports (it pays every payout's fee and the rent of the accounts payouts create). */
  async hotWalletLamports(): Promise<number> {
    const ready = await this.init();
    return solanaCall('getBalance', () => ready.connection.getBalance(ready.hotWallet));
  }

  private async signAndSend(
    ready: Ready,
    instruction: PayoutInstruction,
    owner: PublicKey,
    checkpoint: RailCheckpoint,
    attempt: number,
  ): Promise<RailOutcome> {
    const { connection, hotWallet } = ready;
    const planned = await this.plan(ready, instruction, owner);
    if ('kind' in planned) return planned;
    // Last word before a signature: the agent may have been disabled since the withdrawal, or
    // since this attempt began (docs/payouts.md, "Held payouts"). Nothing signed, nothing held back.
    if (!(await mayPay(instruction))) return { kind: 'held' };
    const { blockhash, lastValidBlockHeight } = await solanaCall('getLatestBlockhash', () =>
      connection.getLatestBlockhash(this.commitment()),
    );
    const tx = new Transaction({ feePayer: hotWallet, blockhash, lastValidBlockHeight });
    tx.add(...payoutInstructions(planned));
    // The signer checks the message against this payout before it signs (functions/signer/payout-message.ts).
    const signature = await this.signer().sign({
      kind: 'payout',
      payout: {
        payoutId: instruction.payoutId,
        destination: instruction.destination,
        netAmount: instruction.netAmount,
        createTokenAccount: planned.create,
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

  /**
   * The transfer a payout will sign, or why it fails: the destination's token account and the hot
   * wallet's USDC and SOL are read first. Checks before signing spare a fee on a transaction bound
   * to fail; the chain stays the authority (funds moving between here and landing make the
   * transaction land with an error).
   */
  private async plan(ready: Ready, instruction: PayoutInstruction, owner: PublicKey): Promise<PayoutTransfer | RailOutcome> {
    const { connection, hotWallet, mint, tokenProgram, hotAta, hotWalletRentExempt } = ready;
    const destinationAta = getAssociatedTokenAddressSync(mint, owner, false, tokenProgram);
    // Only a payout that paid the account-creation fee creates the account (see the file header).
    const create = instruction.createTokenAccount === true;
    const [hotAtaInfo, destinationInfo, lamports] = await Promise.all([
      solanaCall('getAccountInfo', () => connection.getAccountInfo(hotAta)),
      solanaCall('getAccountInfo', () => connection.getAccountInfo(destinationAta)),
      solanaCall('getBalance', () => connection.getBalance(hotWallet)),
    ]);

    // No rent for a token account nobody paid for (see the file header): the agent creates it, or
    // withdraws with createTokenAccount and pays the creation fee.
    if (!destinationInfo && !create) return { kind: 'failed', reason: NO_TOKEN_ACCOUNT };
    if (destinationInfo) {
      const account = tryUnpackAccount(destinationAta, destinationInfo, tokenProgram);
      if (!account) return { kind: 'failed', reason: PAYOUT_FAILURE_REASONS.notATokenAccount };
      if (account.isFrozen) return { kind: 'failed', reason: PAYOUT_FAILURE_REASONS.tokenAccountFrozen };
    }

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
    const { payoutId, netAmount } = instruction;
    return {
      payoutId,
      hotWallet,
      hotAta,
      mint,
      tokenProgram,
      owner,
      destinationAta,
      netAmount,
      create,
      computeUnitLimit,
      priorityFeeMicroLamports,
    };
  }

  /** Sends signed bytes. No preflight: the outcome is read from the chain, never from a simulation. */
  private async broadcast(ready: Ready, base64Tx: string): Promise<void> {
    await solanaCall('sendTransaction', () =>
      ready.connection.sendRawTransaction(Buffer.from(base64Tx, 'base64'), { skipPreflight: true, preflightCommitment: this.commitment() }),
    );
  }

  /** Polls the signature until it reaches the configured commitment, fails, or time runs out. */
  private async awaitOutcome(ready: Ready, saved: SolanaCheckpoint, first: SignatureStatus | null): Promise<RailOutcome> {
    const deadline = Date.now() + this.confirmTimeoutMs;
    let status = first ?? (await statusAt(ready.connection, saved.signature, false)).status;
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
        const height = await solanaCall('getBlockHeight', () => ready.connection.getBlockHeight(this.commitment()));
        if (height > saved.lastValidBlockHeight) return { kind: 'pending', externalId: saved.signature };
      }
      if (Date.now() + this.pollIntervalMs > deadline) return { kind: 'pending', externalId: saved.signature };
      await sleep(this.pollIntervalMs);
      status = (await statusAt(ready.connection, saved.signature, false)).status;
    }
  }

  /** The rent-exempt minimum of a token account of this mint, asked once (a creation pays it). */
  private newTokenAccountRent(ready: Ready): Promise<number> {
    this.tokenAccountRent ??= solanaCall('getMinimumBalanceForRentExemption', () =>
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

  private load(): Promise<Ready> {
    return connectRail({
      rpcUrl: this.options.rpcUrl ?? config().SOLANA_RPC_URL,
      mint: this.options.mint ?? config().USDC_MINT,
      commitment: this.commitment(),
      signer: this.signer(),
      rpcTimeoutMs: this.rpcTimeoutMs,
    });
  }
}

/** The payout's `mayPay` (absent: it may). Not an RPC call: its errors pass through unchanged. */
function mayPay(instruction: PayoutInstruction): Promise<boolean> {
  return instruction.mayPay ? instruction.mayPay() : Promise.resolve(true);
}
