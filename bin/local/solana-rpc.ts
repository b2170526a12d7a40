/**
 * A local stand-in for a Solana RPC node: an in-process LiteSVM behind a tiny JSON-RPC server on
 * 127.0.0.1, speaking just the methods `@solana/web3.js`'s `Connection` uses for the payout rail.
 * The production rail runs against it unchanged. LiteSVM executes SPL Token (its Pinocchio build,
 * p-token), Associated Token Account and Memo programs, and the ComputeBudget instructions: the
 * requested compute-unit limit is enforced and the priority fee (ceil(limit × price / 10^6)
 * lamports) charged with the base fee. It is NOT a validator: no leaders, forks, gossip or fee
 * markets, and every landed transaction is immediately final.
 *
 * Blocks and blockhashes are modelled here, because LiteSVM has neither, as a cluster has them:
 * every landed transaction is a block of its own (the block height starts at 1,000 and grows by one
 * per landed transaction, and on demand), and every block has a new blockhash, valid until the
 * height passes its `lastValidBlockHeight` (its block's height + 150). `getLatestBlockhash` answers
 * the newest; `isBlockhashValid` any. A transaction can land while its recent blockhash is one the
 * stand-in issued and has not expired, older ones included: LiteSVM's own check (only its latest
 * blockhash) is off, and the stand-in refuses the others as a node does: `BlockhashNotFound` in
 * `simulateTransaction`'s `value.err`, as a -32002 preflight failure from `sendTransaction`, and,
 * with `skipPreflight`, a signature that never lands. So two transactions built alike one landed
 * transaction apart differ by their blockhash, as two built a slot apart do on a cluster (an
 * x402 buyer paying one seller one price again is a new payment). A transaction whose signature
 * already landed is `AlreadyProcessed` (the payout rail's exactly-once rests on it), from the
 * stand-in's record of every landed signature, which outlives LiteSVM's bounded history. Unlike a
 * cluster no block is made while nothing lands: two transactions built alike with nothing landed
 * between them are one. Durable nonces are not modelled (nothing here uses them): a transaction
 * whose recent blockhash is a nonce value is refused like any unknown blockhash. The recent
 * blockhashes are kept with the chain state across restarts (a state file from before them keeps
 * its one blockhash).
 *
 * Controls, as methods of the returned object and as JSON-RPC methods (for curl while `npm start`):
 *   _advanceBlocks [n]            height += n; the last of those blocks has a new blockhash, and
 *                                 the blockhashes whose last valid height it passed expire
 *   _expireBlockhash              advance just past the newest blockhash's last valid height: every
 *                                 blockhash issued so far has expired
 *   _dropNextSend [n]             the next n sendTransaction calls answer a signature but never land
 *   _failNext [method, n]         the next n calls of `method` answer HTTP 503
 *   _lagNext [method, blocks, n]  the next n calls of `method` are answered by a node `blocks` behind
 *                                 the tip, as a load balancer may route a call to a lagging node: its
 *                                 context slot and heights are that far back, transactions that landed
 *                                 since are unknown to it, and a `minContextSlot` past it is refused
 *                                 (-32016). getSignatureStatuses, getBlockHeight, getSlot, getEpochInfo,
 *                                 getSignaturesForAddress, getTransaction.
 *   _holdConfirmations [bool]     while held, new transactions stay at 'processed'; release → 'finalized'
 *   _mintTo [owner, microUsdc]    mints USDC-like tokens to owner's associated token account
 *   _createTokenAccount [owner]   creates owner's associated token account (what a wallet app does
 *                                 before receiving USDC; the payout rail creates it only for a
 *                                 payout that paid the account-creation fee)
 *   _closeTokenAccount [owner]    closes it again, its rent back to the owner (what the owner's
 *                                 wallet does; the stand-in skips the owner's signature)
 *
 * For top-ups (docs/topups.md) it also keeps, per landed transaction, its account keys and the
 * token balances of its token accounts before and after, and answers `getSignaturesForAddress`
 * (newest first; `before`, `until`, `limit`) and `getTransaction` (`json` encoding, with
 * `meta.pre/postTokenBalances`) from them, as a node with full history would. Only 'finalized'
 * is told apart: at 'confirmed' the not-yet-final transactions are listed too (LiteSVM has no
 * confirmed-but-not-final stage). It holds a deposit wallet (whose USDC token account exists) and a
 * demo payer funded with SOL and USDC, so a top-up can be paid with a real signed transfer.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { dirname } from 'node:path';
import { address, getTransactionDecoder, lamports as toLamports } from '@solana/kit';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createMintToInstruction,
  getAssociatedTokenAddressSync,
  MINT_SIZE,
  MintLayout,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token';
import { Keypair, PublicKey, SystemProgram, Transaction, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { FailedTransactionMetadata, LiteSVM } from 'litesvm';
import { type LocalRequest, sendJson, startLocalServer } from './local-server';

/** Blocks a blockhash stays valid after it was issued (Solana's MAX_PROCESSING_AGE). */
export const BLOCKHASH_LIFETIME = 150;
const FIRST_BLOCK_HEIGHT = 1_000;
const MEMO_PROGRAM_IDS = new Set(['MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr', 'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo']);
/**
 * The chain presents itself as Solana devnet (DESIGN §17): `@x402/svm` accepts only the public
 * networks, and a stock x402 buyer pays only in known assets, so the genesis hash (whose first 32
 * characters are the CAIP-2 reference) and the USDC mint are devnet's. The mint account is written
 * at that address directly (LiteSVM's setAccount), with the stand-in's mint authority.
 */
const GENESIS_HASH = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG';
/** CAIP-2 id of the network the stand-in presents itself as: `solana:` + the genesis hash's first 32 characters. */
export const LOCAL_SOLANA_NETWORK = `solana:${GENESIS_HASH.slice(0, 32)}`;
/** Circle's devnet USDC mint (6 decimals), the asset `@x402/svm` knows for devnet. */
export const DEVNET_USDC_MINT = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';

export interface LocalSolanaOptions {
  port?: number;
  /** Micro-USDC minted to the hot wallet at start (default 1,000,000 USDC). */
  hotWalletMicroUsdc?: bigint;
  /** Lamports given to the hot wallet for fees and rent (default 10 SOL). */
  hotWalletLamports?: bigint;
  /** Keep chain and shim state in this file across restarts (npm start); in memory when unset. */
  stateFile?: string;
  /** Start from `stateFile` but never write it back (`npm run audit -- --local` reads npm start's chain). */
  readOnly?: boolean;
}

export interface LandedTransaction {
  signature: string;
  slot: number;
  /** Transaction error in RPC JSON form, null when it succeeded. */
  err: unknown;
  /** Text of the transaction's memo instruction, if it had one. */
  memo: string | undefined;
}

export interface LocalSolana {
  url: string;
  /** Base58 address of the USDC mint (6 decimals): devnet's (`DEVNET_USDC_MINT`). */
  mint: string;
  /** CAIP-2 id the chain presents itself as (`LOCAL_SOLANA_NETWORK`, devnet). */
  network: string;
  hotWallet: { publicKey: string /** base58 of the 64-byte secret key */; secretKey: string };
  /** The platform's deposit wallet for top-ups (its USDC token account exists from the start). */
  depositWallet: string;
  /** A wallet funded with SOL and USDC that pays top-ups in demos and tests (base58 secret key). */
  demoPayer: { publicKey: string; secretKey: string };
  blockHeight(): number;
  advanceBlocks(n: number): void;
  expireBlockhash(): void;
  dropNextSends(n?: number): void;
  failNext(method: string, n?: number): void;
  /** The next `n` calls of `method` come from a node `blocks` behind the tip (see `_lagNext`). */
  lagNext(method: string, blocks: number, n?: number): void;
  holdConfirmations(hold: boolean): void;
  mintTo(owner: string, microUsdc: bigint): void;
  /** Creates `owner`'s associated token account for the mint, paid by the mint authority (idempotent). */
  createTokenAccount(owner: string): void;
  /** Closes `owner`'s empty associated token account, as the owner may at any time (its rent to the owner). */
  closeTokenAccount(owner: string): void;
  /** Token balance (micro-USDC) of `owner`'s associated token account; 0n when it has none. */
  tokenBalance(owner: string): bigint;
  tokenAccountExists(owner: string): boolean;
  lamports(account: string): bigint;
  /** Every transaction that landed (successfully or with an error), oldest first. */
  landed(): readonly LandedTransaction[];
  /**
   * Deploys the program at `from` again at `to` (attack tests: a program of the local chain standing
   * in, at a mainnet program's address, for one it lacks, e.g. Lighthouse, whose MemoryWrite funds an
   * account from its payer as the Associated Token Account program's Create does).
   */
  copyProgram(from: string, to: string): void;
  stop(): Promise<void>;
}

/** A token account's balance in RPC JSON form (`meta.preTokenBalances` entries). */
interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: { amount: string; decimals: number; uiAmount: number; uiAmountString: string };
}

interface Status extends LandedTransaction {
  finalized: boolean;
  /** Static account keys of the transaction (absent for transactions recorded before top-ups existed). */
  accountKeys?: string[];
  /** Every signature the transaction carries, the fee payer's first, as `getTransaction` lists them (absent on older records). */
  signatures?: string[];
  preTokenBalances?: TokenBalance[];
  postTokenBalances?: TokenBalance[];
  blockTime?: number;
}

interface SavedShim {
  mintAuthority: string;
  /** Before the chain presented itself as devnet: the secret key of a random mint, no longer used. */
  mint?: string;
  /** The USDC mint is devnet's (set from then on); an older state file is moved over at restore. */
  devnetMint?: true;
  hotWallet: string;
  height: number;
  /** The newest blockhash (LiteSVM's latest) and its last valid block height. */
  blockhash: string;
  lastValid: number;
  /**
   * Every unexpired blockhash with its last valid block height, oldest first, the newest last.
   * Added with a blockhash per block: an older state file has only `blockhash`, its one blockhash.
   */
  blockhashes?: [blockhash: string, lastValidBlockHeight: number][];
  statuses: Status[];
  /** Added with top-ups: generated (and funded) on first start of an older state file. */
  depositWallet?: string;
  demoPayer?: string;
}

interface SignaturesQuery {
  limit?: number;
  before?: string;
  until?: string;
  commitment?: string;
  minContextSlot?: number;
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export async function startLocalSolana(opts: LocalSolanaOptions = {}): Promise<LocalSolana> {
  const chain = opts.stateFile && existsSync(opts.stateFile) ? restore(opts.stateFile) : genesis(opts);
  const server = await startLocalServer((request, res) => chain.handle(request, res), {
    port: opts.port,
    internalError: () => ({ status: 500, body: { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } } }),
  });
  return {
    url: server.url,
    mint: chain.mint.toBase58(),
    network: LOCAL_SOLANA_NETWORK,
    hotWallet: { publicKey: chain.hotWallet.publicKey.toBase58(), secretKey: bs58.encode(chain.hotWallet.secretKey) },
    depositWallet: chain.depositWallet.publicKey.toBase58(),
    demoPayer: { publicKey: chain.demoPayer.publicKey.toBase58(), secretKey: bs58.encode(chain.demoPayer.secretKey) },
    blockHeight: () => chain.height,
    advanceBlocks: (n) => chain.advance(n),
    expireBlockhash: () => chain.expire(),
    dropNextSends: (n = 1) => {
      chain.drops += n;
    },
    failNext: (method, n = 1) => chain.failures.set(method, (chain.failures.get(method) ?? 0) + n),
    lagNext: (method, blocks, n = 1) => chain.lagNext(method, blocks, n),
    holdConfirmations: (hold) => chain.hold(hold),
    mintTo: (owner, microUsdc) => chain.mintTo(new PublicKey(owner), microUsdc),
    createTokenAccount: (owner) => chain.createTokenAccount(new PublicKey(owner)),
    closeTokenAccount: (owner) => chain.closeTokenAccount(new PublicKey(owner)),
    tokenBalance: (owner) => chain.tokenBalance(new PublicKey(owner)),
    tokenAccountExists: (owner) => chain.account(chain.ata(new PublicKey(owner))) !== undefined,
    lamports: (account) => chain.svm.getBalance(address(account)) ?? 0n,
    landed: () => [...chain.statuses.values()].map(({ finalized: _, ...landed }) => landed),
    copyProgram: (from, to) => {
      const program = chain.svm.getAccount(address(from));
      if (!program.exists || !program.executable) throw new Error(`no program at ${from}`);
      chain.svm.addProgram(address(to), program.data);
    },
    stop: () => {
      chain.persist();
      return server.stop();
    },
  };

  function genesis(options: LocalSolanaOptions): Chain {
    const svm = new LiteSVM();
    const mintAuthority = Keypair.generate();
    const hotWallet = Keypair.generate();
    svm.airdrop(address(mintAuthority.publicKey.toBase58()), toLamports(100_000_000_000n));
    svm.airdrop(address(hotWallet.publicKey.toBase58()), toLamports(options.hotWalletLamports ?? 10_000_000_000n));
    const state: SavedShim = {
      mintAuthority: bs58.encode(mintAuthority.secretKey),
      devnetMint: true,
      hotWallet: bs58.encode(hotWallet.secretKey),
      height: FIRST_BLOCK_HEIGHT,
      blockhash: svm.latestBlockhash(),
      lastValid: FIRST_BLOCK_HEIGHT + BLOCKHASH_LIFETIME,
      statuses: [],
    };
    const chain = new Chain(svm, state, options.stateFile);
    chain.installMint();
    chain.mintTo(hotWallet.publicKey, options.hotWalletMicroUsdc ?? 1_000_000_000_000n);
    chain.fundTopupWallets();
    chain.persist();
    return chain;
  }

  function restore(file: string): Chain {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as SavedShim & { svm: string };
    const svm = LiteSVM.fromBytes(Buffer.from(saved.svm, 'base64'));
    const chain = new Chain(svm, saved, opts.readOnly ? undefined : file);
    if (!saved.devnetMint) {
      // A chain from before it presented itself as devnet: the devnet mint, and the hot wallet,
      // deposit wallet and demo payer given their USDC in it (the old mint's tokens stay behind).
      chain.installMint();
      chain.mintTo(chain.hotWallet.publicKey, 1_000_000_000_000n);
      chain.fundTopupWallets();
    } else if (!saved.depositWallet || !saved.demoPayer) chain.fundTopupWallets();
    return chain;
  }
}

/** LiteSVM plus the block/blockhash model and the JSON-RPC methods. */
class Chain {
  readonly mintAuthority: Keypair;
  readonly mint = new PublicKey(DEVNET_USDC_MINT);
  readonly hotWallet: Keypair;
  readonly depositWallet: Keypair;
  readonly demoPayer: Keypair;
  height: number;
  /** The newest blockhash, what getLatestBlockhash answers, and its last valid block height. */
  private blockhash: string;
  private lastValid: number;
  /** Every blockhash a transaction may still name → its last valid block height, oldest first. */
  private readonly recent = new Map<string, number>();
  readonly statuses = new Map<string, Status>();
  drops = 0;
  readonly failures = new Map<string, number>();
  /** Calls still to be answered by a lagging node, per method: how far behind, how many calls. */
  private readonly lags = new Map<string, { behind: number; calls: number }>();
  private held = false;
  private persistTimer: NodeJS.Timeout | undefined;
  private readonly decoder = getTransactionDecoder();

  constructor(
    readonly svm: LiteSVM,
    state: SavedShim,
    private readonly stateFile: string | undefined,
  ) {
    this.mintAuthority = Keypair.fromSecretKey(bs58.decode(state.mintAuthority));
    this.hotWallet = Keypair.fromSecretKey(bs58.decode(state.hotWallet));
    this.depositWallet = state.depositWallet ? Keypair.fromSecretKey(bs58.decode(state.depositWallet)) : Keypair.generate();
    this.demoPayer = state.demoPayer ? Keypair.fromSecretKey(bs58.decode(state.demoPayer)) : Keypair.generate();
    // LiteSVM accepts only its latest blockhash; which blockhashes are still valid is decided here.
    svm.withBlockhashCheck(false);
    this.height = state.height;
    this.blockhash = state.blockhash;
    this.lastValid = state.lastValid;
    for (const [blockhash, lastValid] of state.blockhashes ?? [[state.blockhash, state.lastValid]]) this.recent.set(blockhash, lastValid);
    this.recent.set(this.blockhash, this.lastValid);
    for (const status of state.statuses) this.statuses.set(status.signature, status);
  }

  /** Adds `blocks` blocks; the last one's blockhash is the newest (nobody saw the ones between). */
  advance(blocks: number): void {
    if (!Number.isInteger(blocks) || blocks < 0) throw new RpcError(-32602, 'blocks must be a non-negative integer');
    if (blocks === 0) return;
    this.height += blocks;
    this.svm.expireBlockhash(); // only to draw the next hash from LiteSVM's chain of them
    this.blockhash = this.svm.latestBlockhash();
    this.lastValid = this.height + BLOCKHASH_LIFETIME;
    this.recent.set(this.blockhash, this.lastValid);
    // Issued in order, so the expired ones are at the front: nothing signed with them can land again.
    for (const [blockhash, lastValid] of this.recent) {
      if (lastValid >= this.height) break;
      this.recent.delete(blockhash);
    }
    this.schedulePersist();
  }

  /** Past the newest blockhash's last valid height: every blockhash issued so far has expired. */
  expire(): void {
    this.advance(this.lastValid - this.height + 1);
  }

  /** What a node answers for a transaction naming this blockhash: valid until its last valid height. */
  blockhashValid(blockhash: string): boolean {
    const lastValid = this.recent.get(blockhash);
    return lastValid !== undefined && lastValid >= this.height;
  }

  /**
   * Why a node would refuse these bytes before executing them, in its order (the blockhash's age,
   * then the status cache): `BlockhashNotFound`, `AlreadyProcessed`, or undefined.
   */
  private refusal(bytes: Uint8Array, checkBlockhash = true): 'BlockhashNotFound' | 'AlreadyProcessed' | undefined {
    if (checkBlockhash && !this.blockhashValid(VersionedTransaction.deserialize(bytes).message.recentBlockhash)) return 'BlockhashNotFound';
    if (this.statuses.has(signatureOf(bytes))) return 'AlreadyProcessed';
    return undefined;
  }

  lagNext(method: string, blocks: number, calls: number): void {
    if (!LAGGABLE.has(method)) throw new RpcError(-32602, `a lagging node is modelled for ${[...LAGGABLE].join(', ')} only`);
    if (!Number.isInteger(blocks) || blocks < 1 || !Number.isInteger(calls) || calls < 1) {
      throw new RpcError(-32602, 'blocks and calls must be positive integers');
    }
    this.lags.set(method, { behind: blocks, calls });
  }

  /** The slot (= height here) the node answering this call of `method` has reached: the tip, or a lagging node's. */
  private viewFor(method: string): number {
    const lag = this.lags.get(method);
    if (!lag) return this.height;
    if (lag.calls <= 1) this.lags.delete(method);
    else lag.calls -= 1;
    return Math.max(FIRST_BLOCK_HEIGHT, this.height - lag.behind);
  }

  hold(hold: boolean): void {
    this.held = hold;
    if (!hold) for (const status of this.statuses.values()) status.finalized = true;
  }

  ata(owner: PublicKey): PublicKey {
    return getAssociatedTokenAddressSync(this.mint, owner, true);
  }

  account(key: PublicKey) {
    const account = this.svm.getAccount(address(key.toBase58()));
    return account.exists ? account : undefined;
  }

  tokenBalance(owner: PublicKey): bigint {
    const account = this.account(this.ata(owner));
    return account ? Buffer.from(account.data).readBigUInt64LE(64) : 0n;
  }

  mintTo(owner: PublicKey, amount: bigint): void {
    const ata = this.ata(owner);
    this.execute(
      [
        createAssociatedTokenAccountIdempotentInstruction(this.mintAuthority.publicKey, ata, owner, this.mint),
        createMintToInstruction(this.mint, ata, this.mintAuthority.publicKey, amount),
      ],
      [this.mintAuthority],
    );
  }

  /**
   * Writes the USDC mint at devnet's address (nobody here holds that key, so no transaction can
   * create it): an initialized 6-decimal SPL Token mint whose authority is the stand-in's.
   */
  installMint(): void {
    const data = Buffer.alloc(MINT_SIZE);
    MintLayout.encode(
      {
        mintAuthorityOption: 1,
        mintAuthority: this.mintAuthority.publicKey,
        supply: 0n,
        decimals: 6,
        isInitialized: true,
        freezeAuthorityOption: 0,
        freezeAuthority: PublicKey.default,
      },
      data,
    );
    this.svm.setAccount({
      address: address(this.mint.toBase58()),
      lamports: toLamports(this.svm.minimumBalanceForRentExemption(BigInt(MINT_SIZE))),
      data: new Uint8Array(data),
      programAddress: address(TOKEN_PROGRAM_ID.toBase58()),
      executable: false,
      space: BigInt(MINT_SIZE),
    });
    this.schedulePersist();
  }

  /** The deposit wallet's USDC token account, and the demo payer's 10 SOL and 1,000 USDC. */
  fundTopupWallets(): void {
    this.createTokenAccount(this.depositWallet.publicKey);
    this.svm.airdrop(address(this.demoPayer.publicKey.toBase58()), toLamports(10_000_000_000n));
    this.mintTo(this.demoPayer.publicKey, 1_000_000_000n);
    this.persist();
  }

  createTokenAccount(owner: PublicKey): void {
    this.execute(
      [createAssociatedTokenAccountIdempotentInstruction(this.mintAuthority.publicKey, this.ata(owner), owner, this.mint)],
      [this.mintAuthority],
    );
  }

  /**
   * What the owner's `CloseAccount` does to an empty token account: gone, its lamports to the
   * owner. Written directly (LiteSVM's setAccount) because the stand-in holds no owner's key.
   */
  closeTokenAccount(owner: PublicKey): void {
    const ata = this.ata(owner);
    const account = this.account(ata);
    if (!account) return;
    if (Buffer.from(account.data).readBigUInt64LE(64) !== 0n) throw new RpcError(-32602, 'token account is not empty');
    const ownerAccount = this.account(owner);
    this.svm.setAccount({
      address: address(owner.toBase58()),
      lamports: toLamports((ownerAccount?.lamports ?? 0n) + account.lamports),
      data: new Uint8Array(),
      programAddress: address(SystemProgram.programId.toBase58()),
      executable: false,
      space: 0n,
    });
    this.svm.setAccount({
      address: address(ata.toBase58()),
      lamports: toLamports(0n),
      data: new Uint8Array(),
      programAddress: address(SystemProgram.programId.toBase58()),
      executable: false,
      space: 0n,
    });
    this.schedulePersist();
  }

  /** Signs and lands an operator transaction (setup, mintTo); throws if it fails. */
  execute(instructions: Parameters<Transaction['add']>, signers: Keypair[]): void {
    const [payer] = signers;
    if (!payer) throw new Error('a transaction needs a fee payer');
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: this.blockhash }).add(...instructions);
    tx.sign(...signers);
    const result = this.land(tx.serialize());
    if (result.err !== null) throw new Error(`local chain setup transaction failed: ${JSON.stringify(result.err)}`);
  }

  /**
   * Executes a transaction; records it and makes it a block of its own when it lands. A landed
   * transaction is saved to the state file before this returns, so before the RPC answers: a kill of
   * the stand-in right after `sendTransaction` answered (a payout's signature already in the table)
   * cannot lose it from the chain, which the ledger audit would then miss for good.
   */
  private land(bytes: Uint8Array): { signature: string; err: unknown; landed: boolean } {
    const signature = signatureOf(bytes);
    // An unknown or expired blockhash, or a signature that landed before: a leader drops it unexecuted.
    const refused = this.refusal(bytes);
    if (refused) return { signature, err: refused, landed: false };
    const accountKeys = VersionedTransaction.deserialize(bytes).message.staticAccountKeys.map((k) => k.toBase58());
    const preTokenBalances = this.tokenBalances(accountKeys);
    const result = this.svm.sendTransaction(this.decoder.decode(bytes));
    // A failed transaction that LiteSVM kept in its history landed (and paid its fee); one it did
    // not keep (no fee payer funds, say) never reached a block.
    const landed = !(result instanceof FailedTransactionMetadata) || this.svm.getTransaction(signature as never) !== null;
    const err = result instanceof FailedTransactionMetadata ? rpcError(result) : null;
    if (landed) {
      this.statuses.set(signature, {
        signature,
        slot: this.height + 1, // its block's
        err,
        memo: memoOf(bytes),
        finalized: !this.held,
        accountKeys,
        signatures: VersionedTransaction.deserialize(bytes).signatures.map((s) => bs58.encode(s)),
        preTokenBalances,
        postTokenBalances: this.tokenBalances(accountKeys),
        blockTime: Math.floor(Date.now() / 1000),
      });
      this.advance(1);
      this.persist();
    }
    return { signature, err, landed };
  }

  handle({ body }: LocalRequest, res: ServerResponse): void {
    let request: unknown;
    try {
      request = JSON.parse(body);
    } catch {
      sendJson(res, 200, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      return;
    }
    const calls = Array.isArray(request) ? request : [request];
    for (const call of calls) {
      const method = (call as { method?: unknown }).method;
      const left = typeof method === 'string' ? (this.failures.get(method) ?? 0) : 0;
      if (left > 0) {
        this.failures.set(method as string, left - 1);
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end('injected failure');
        return;
      }
    }
    const answers = calls.map((call) => this.dispatch(call));
    sendJson(res, 200, Array.isArray(request) ? answers : answers[0]);
  }

  private dispatch(call: unknown): unknown {
    const { id = null, method, params = [] } = (call ?? {}) as { id?: unknown; method?: unknown; params?: unknown };
    try {
      if (typeof method !== 'string' || !Array.isArray(params)) throw new RpcError(-32600, 'Invalid request');
      return { jsonrpc: '2.0', id, result: this.method(method, params) };
    } catch (error) {
      if (error instanceof RpcError) {
        return { jsonrpc: '2.0', id, error: { code: error.code, message: error.message, ...(error.data ? { data: error.data } : {}) } };
      }
      return { jsonrpc: '2.0', id, error: { code: -32603, message: error instanceof Error ? error.message : 'Internal error' } };
    }
  }

  private method(method: string, params: unknown[]): unknown {
    const context = { slot: this.height, apiVersion: '2.2.0' };
    switch (method) {
      case 'getLatestBlockhash':
        return { context, value: { blockhash: this.blockhash, lastValidBlockHeight: this.lastValid } };
      case 'isBlockhashValid':
        if (typeof params[0] !== 'string') throw new RpcError(-32602, 'Invalid param: expected a blockhash');
        return { context, value: this.blockhashValid(params[0]) };
      case 'getBlockHeight':
      case 'getSlot':
        return reached(this.viewFor(method), params[0]);
      case 'getEpochInfo': {
        // One bank answers it: the slot and the block height are the same moment's (here the same number).
        const view = reached(this.viewFor(method), params[0]);
        return {
          absoluteSlot: view,
          blockHeight: view,
          epoch: 0,
          slotIndex: view,
          slotsInEpoch: 432_000,
          transactionCount: this.statuses.size,
        };
      }
      case 'getVersion':
        return { 'solana-core': '2.2.0 (LiteSVM local stand-in)', 'feature-set': 0 };
      case 'getGenesisHash':
        return GENESIS_HASH;
      case 'getHealth':
        return 'ok';
      case 'getBalance':
        return { context, value: Number(this.svm.getBalance(address(pubkey(params[0]))) ?? 0n) };
      case 'getMinimumBalanceForRentExemption':
        return Number(this.svm.minimumBalanceForRentExemption(BigInt(integer(params[0]))));
      case 'getAccountInfo':
        return { context, value: this.accountInfo(pubkey(params[0]), params[1]) };
      case 'getMultipleAccounts': {
        const keys = Array.isArray(params[0]) ? params[0] : [];
        return { context, value: keys.map((key) => this.accountInfo(pubkey(key), params[1])) };
      }
      case 'getTokenAccountBalance':
        return { context, value: this.tokenAmount(pubkey(params[0])) };
      case 'getSignatureStatuses': {
        const signatures = Array.isArray(params[0]) ? params[0] : [];
        // A lagging node knows nothing that landed after its slot.
        const view = this.viewFor(method);
        return { context: { ...context, slot: view }, value: signatures.map((s) => this.signatureStatus(String(s), view)) };
      }
      case 'sendTransaction':
        return this.sendTransaction(params);
      case 'getSignaturesForAddress':
        return this.signaturesForAddress(pubkey(params[0]), (params[1] ?? {}) as SignaturesQuery);
      case 'getTransaction':
        return this.transaction(String(params[0]), (params[1] ?? {}) as { commitment?: string; encoding?: string });
      case 'simulateTransaction':
        return this.simulate(params);
      case '_advanceBlocks':
        this.advance(integer(params[0] ?? 1));
        return this.height;
      case '_expireBlockhash':
        this.expire();
        return this.height;
      case '_dropNextSend':
        this.drops += integer(params[0] ?? 1);
        return this.drops;
      case '_lagNext':
        this.lagNext(String(params[0]), integer(params[1]), integer(params[2] ?? 1));
        return null;
      case '_failNext': {
        const target = String(params[0]);
        this.failures.set(target, (this.failures.get(target) ?? 0) + integer(params[1] ?? 1));
        return this.failures.get(target);
      }
      case '_holdConfirmations':
        this.hold(params[0] === true);
        return this.held;
      case '_createTokenAccount':
        this.createTokenAccount(new PublicKey(pubkey(params[0])));
        return this.ata(new PublicKey(pubkey(params[0]))).toBase58();
      case '_closeTokenAccount':
        this.closeTokenAccount(new PublicKey(pubkey(params[0])));
        return null;
      case '_mintTo':
        this.mintTo(new PublicKey(pubkey(params[0])), BigInt(integer(params[1])));
        return this.tokenBalance(new PublicKey(pubkey(params[0]))).toString();
      default:
        throw new RpcError(-32601, `Method not found: ${method} (the LiteSVM stand-in does not serve it)`);
    }
  }

  private accountInfo(key: string, config: unknown) {
    const encoding = (config as { encoding?: string } | undefined)?.encoding ?? 'base64';
    if (encoding !== 'base64') throw new RpcError(-32602, `encoding ${encoding} is not supported by the LiteSVM stand-in`);
    const account = this.svm.getAccount(address(key));
    if (!account.exists) return null;
    return {
      data: [Buffer.from(account.data).toString('base64'), 'base64'],
      executable: account.executable,
      lamports: Number(account.lamports),
      owner: account.programAddress,
      rentEpoch: 0,
      space: account.data.length,
    };
  }

  private tokenAmount(key: string) {
    const account = this.svm.getAccount(address(key));
    if (!account.exists || account.data.length < 72) throw new RpcError(-32602, 'Invalid param: could not find account');
    const data = Buffer.from(account.data);
    const mint = this.svm.getAccount(address(new PublicKey(data.subarray(0, 32)).toBase58()));
    const decimals = mint.exists ? (mint.data[44] ?? 0) : 0;
    const amount = data.readBigUInt64LE(64);
    const ui = Number(amount) / 10 ** decimals;
    return { amount: amount.toString(), decimals, uiAmount: ui, uiAmountString: String(ui) };
  }

  /** Token accounts among `keys` (by index) and their balances now: `meta.pre/postTokenBalances`. */
  private tokenBalances(keys: string[]): TokenBalance[] {
    const balances: TokenBalance[] = [];
    keys.forEach((key, accountIndex) => {
      const account = this.svm.getAccount(address(key));
      if (!account.exists || account.programAddress !== TOKEN_PROGRAM_ID.toBase58() || account.data.length < 165) return;
      const data = Buffer.from(account.data);
      const mint = new PublicKey(data.subarray(0, 32)).toBase58();
      const mintAccount = this.svm.getAccount(address(mint));
      const decimals = mintAccount.exists ? (mintAccount.data[44] ?? 0) : 0;
      const amount = data.readBigUInt64LE(64);
      const ui = Number(amount) / 10 ** decimals;
      balances.push({
        accountIndex,
        mint,
        owner: new PublicKey(data.subarray(32, 64)).toBase58(),
        programId: TOKEN_PROGRAM_ID.toBase58(),
        uiTokenAmount: { amount: amount.toString(), decimals, uiAmount: ui, uiAmountString: String(ui) },
      });
    });
    return balances;
  }

  /** Newest first, as a node answers: `before`/`until` are exclusive, `limit` at most 1,000. */
  private signaturesForAddress(account: string, query: SignaturesQuery) {
    const limit = Math.min(query.limit === undefined ? 1_000 : integer(query.limit), 1_000);
    // A lagging node lists nothing that landed after its slot (and refuses a minContextSlot past it).
    const view = reached(this.viewFor('getSignaturesForAddress'), query);
    const all = [...this.statuses.values()].reverse().filter((s) => s.accountKeys?.includes(account) && s.slot <= view);
    let start = 0;
    if (query.before) {
      const at = all.findIndex((s) => s.signature === query.before);
      start = at < 0 ? all.length : at + 1;
    }
    const out = [];
    for (const status of all.slice(start)) {
      if (query.until && status.signature === query.until) break;
      if (query.commitment === 'finalized' && !status.finalized) continue;
      out.push({
        signature: status.signature,
        slot: status.slot,
        err: status.err,
        memo: status.memo ?? null,
        blockTime: status.blockTime ?? null,
        confirmationStatus: status.finalized ? 'finalized' : 'processed',
      });
      if (out.length >= limit) break;
    }
    return out;
  }

  /** `getTransaction` in `json` encoding, null when unknown (or not yet final at 'finalized'). */
  private transaction(signature: string, options: { commitment?: string; encoding?: string }) {
    if (options.encoding !== undefined && options.encoding !== 'json') {
      throw new RpcError(-32602, `encoding ${options.encoding} is not supported by the LiteSVM stand-in`);
    }
    const found = this.statuses.get(signature);
    // A lagging node has not seen a transaction that landed after its slot.
    const status = found && found.slot <= this.viewFor('getTransaction') ? found : undefined;
    if (!status?.accountKeys) return null;
    if (options.commitment === 'finalized' && !status.finalized) return null;
    return {
      slot: status.slot,
      blockTime: status.blockTime ?? null,
      version: 'legacy',
      transaction: {
        signatures: status.signatures ?? [signature],
        message: { accountKeys: status.accountKeys, header: null, recentBlockhash: null, instructions: [] },
      },
      meta: {
        err: status.err,
        status: status.err === null ? { Ok: null } : { Err: status.err },
        fee: 5_000,
        preBalances: [],
        postBalances: [],
        preTokenBalances: status.preTokenBalances ?? [],
        postTokenBalances: status.postTokenBalances ?? [],
        innerInstructions: [],
        logMessages: [],
        loadedAddresses: { writable: [], readonly: [] },
        rewards: [],
      },
    };
  }

  private signatureStatus(signature: string, view = this.height) {
    const status = this.statuses.get(signature);
    if (!status || status.slot > view) return null;
    return {
      slot: status.slot,
      confirmations: status.finalized ? null : 0,
      err: status.err,
      status: status.err === null ? { Ok: null } : { Err: status.err },
      confirmationStatus: status.finalized ? 'finalized' : 'processed',
    };
  }

  private sendTransaction(params: unknown[]): string {
    const bytes = transactionBytes(params);
    const config = (params[1] ?? {}) as { skipPreflight?: boolean };
    const signature = signatureOf(bytes);
    if (this.drops > 0) {
      // Accepted by "the node" but never reaches a leader: the client sees only its signature.
      this.drops -= 1;
      return signature;
    }
    if (!config.skipPreflight) {
      const refused = this.refusal(bytes);
      if (refused) {
        throw new RpcError(-32002, `Transaction simulation failed: ${REFUSAL_MESSAGES[refused]}`, {
          err: refused,
          logs: [],
          accounts: null,
          unitsConsumed: 0,
          returnData: null,
        });
      }
      const simulated = this.svm.simulateTransaction(this.decoder.decode(bytes));
      if (simulated instanceof FailedTransactionMetadata) {
        const err = rpcError(simulated);
        throw new RpcError(-32002, `Transaction simulation failed: ${JSON.stringify(err)}`, {
          err,
          logs: simulated.meta().logs(),
          accounts: null,
          unitsConsumed: 0,
          returnData: null,
        });
      }
    }
    this.land(bytes);
    return signature;
  }

  private simulate(params: unknown[]) {
    // `sigVerify: false` (the RPC's default) simulates a partly signed transaction, as a node does:
    // the x402 facilitator simulates the buyer's transaction before it signs as the fee payer.
    const config = params[1] as { sigVerify?: unknown; replaceRecentBlockhash?: unknown } | undefined;
    const sigVerify = config?.sigVerify === true;
    const replace = config?.replaceRecentBlockhash === true;
    if (sigVerify && replace) throw new RpcError(-32602, 'sigVerify may not be used with replaceRecentBlockhash');
    const bytes = transactionBytes(params);
    // With `replaceRecentBlockhash` the node simulates under its newest blockhash, whatever the transaction names.
    const replacement = replace ? { replacementBlockhash: { blockhash: this.blockhash, lastValidBlockHeight: this.lastValid } } : {};
    const refused = this.refusal(bytes, !replace);
    if (refused) {
      return {
        context: { slot: this.height },
        value: { err: refused, logs: [], accounts: null, unitsConsumed: 0, returnData: null, ...replacement },
      };
    }
    const transaction = this.decoder.decode(bytes);
    if (!sigVerify) this.svm.withSigverify(false);
    let simulated: ReturnType<LiteSVM['simulateTransaction']>;
    try {
      simulated = this.svm.simulateTransaction(transaction);
    } finally {
      if (!sigVerify) this.svm.withSigverify(true);
    }
    const meta = simulated.meta();
    return {
      context: { slot: this.height },
      value: {
        err: simulated instanceof FailedTransactionMetadata ? rpcError(simulated) : null,
        logs: meta.logs(),
        accounts: null,
        unitsConsumed: Number(meta.computeUnitsConsumed()),
        returnData: null,
        ...replacement,
      },
    };
  }

  /**
   * Snapshots are ~2 MB: what no transaction carries (a block advanced, an account written directly)
   * is written at most every 250 ms while busy, and on stop; a landed transaction at once (`land`).
   */
  private schedulePersist(): void {
    if (!this.stateFile || this.persistTimer) return;
    this.persistTimer = setTimeout(() => this.persist(), 250);
    this.persistTimer.unref();
  }

  /**
   * Writes the whole state (a temporary file renamed over the old one: a kill leaves the old or the
   * new, never half of one). Survives the process being killed; a power cut may still lose what the
   * operating system had not written to disk yet.
   */
  persist(): void {
    if (this.persistTimer) clearTimeout(this.persistTimer);
    this.persistTimer = undefined;
    if (!this.stateFile) return;
    const state: SavedShim & { svm: string } = {
      mintAuthority: bs58.encode(this.mintAuthority.secretKey),
      devnetMint: true,
      hotWallet: bs58.encode(this.hotWallet.secretKey),
      height: this.height,
      blockhash: this.blockhash,
      lastValid: this.lastValid,
      blockhashes: [...this.recent],
      statuses: [...this.statuses.values()],
      depositWallet: bs58.encode(this.depositWallet.secretKey),
      demoPayer: bs58.encode(this.demoPayer.secretKey),
      svm: Buffer.from(this.svm.toBytes()).toString('base64'),
    };
    mkdirSync(dirname(this.stateFile), { recursive: true });
    const temp = `${this.stateFile}.tmp`;
    writeFileSync(temp, JSON.stringify(state), { mode: 0o600 });
    renameSync(temp, this.stateFile);
  }
}

/** The methods a lagging node is modelled for (`_lagNext`). */
const LAGGABLE: ReadonlySet<string> = new Set([
  'getSignatureStatuses',
  'getBlockHeight',
  'getSlot',
  'getEpochInfo',
  'getSignaturesForAddress',
  'getTransaction',
]);

/** `view`, unless the call asked for a `minContextSlot` the answering node has not reached: then the RPC's refusal. */
function reached(view: number, config: unknown): number {
  const min = (config as { minContextSlot?: unknown } | undefined)?.minContextSlot;
  if (typeof min === 'number' && min > view) {
    throw new RpcError(-32016, 'Minimum context slot has not been reached', { contextSlot: view });
  }
  return view;
}

function pubkey(value: unknown): string {
  if (typeof value !== 'string') throw new RpcError(-32602, 'Invalid param: expected a base58 public key');
  try {
    return new PublicKey(value).toBase58();
  } catch {
    throw new RpcError(-32602, `Invalid param: ${value} is not a public key`);
  }
}

function integer(value: unknown): number {
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
    throw new RpcError(-32602, 'Invalid param: expected a non-negative integer');
  return n;
}

function transactionBytes(params: unknown[]): Uint8Array {
  const [encoded, config] = params as [unknown, { encoding?: string } | undefined];
  if (typeof encoded !== 'string') throw new RpcError(-32602, 'Invalid param: expected an encoded transaction');
  const bytes = config?.encoding === 'base64' ? Buffer.from(encoded, 'base64') : Buffer.from(bs58.decode(encoded));
  try {
    VersionedTransaction.deserialize(bytes);
  } catch {
    throw new RpcError(-32602, 'Invalid param: failed to deserialize transaction');
  }
  return bytes;
}

function signatureOf(bytes: Uint8Array): string {
  const [signature] = VersionedTransaction.deserialize(bytes).signatures;
  if (!signature) throw new RpcError(-32602, 'Invalid param: transaction has no signature');
  return bs58.encode(signature);
}

function memoOf(bytes: Uint8Array): string | undefined {
  const message = VersionedTransaction.deserialize(bytes).message;
  const keys = message.staticAccountKeys;
  for (const ix of message.compiledInstructions) {
    const program = keys[ix.programIdIndex]?.toBase58();
    if (program && MEMO_PROGRAM_IDS.has(program)) return Buffer.from(ix.data).toString('utf8');
  }
  return undefined;
}

/** LiteSVM's error → the JSON shape a Solana RPC node uses (`{"InstructionError":[1,{"Custom":1}]}`). */
function rpcError(failed: FailedTransactionMetadata): unknown {
  const err = failed.err() as unknown;
  if (typeof err === 'number') return TRANSACTION_ERRORS[err] ?? `TransactionError(${err})`;
  if (err && typeof err === 'object') {
    const o = err as { index?: number; accountIndex?: number; err?: () => unknown; constructor: { name: string } };
    if (o.constructor.name === 'TransactionErrorInstructionError' && typeof o.err === 'function') {
      const inner = o.err() as unknown;
      if (typeof inner === 'number') return { InstructionError: [o.index, INSTRUCTION_ERRORS[inner] ?? `InstructionError(${inner})`] };
      if (inner && typeof inner === 'object' && 'code' in inner)
        return { InstructionError: [o.index, { Custom: (inner as { code: number }).code }] };
      return { InstructionError: [o.index, 'BorshIoError'] };
    }
    if (o.constructor.name === 'TransactionErrorDuplicateInstruction') return { DuplicateInstruction: o.index };
    if (o.constructor.name === 'TransactionErrorInsufficientFundsForRent')
      return { InsufficientFundsForRent: { account_index: o.accountIndex } };
    if (o.constructor.name === 'TransactionErrorProgramExecutionTemporarilyRestricted') {
      return { ProgramExecutionTemporarilyRestricted: { account_index: o.accountIndex } };
    }
  }
  return String(err);
}

/** A node's words for the refusals the stand-in makes itself (`TransactionError`'s Display). */
const REFUSAL_MESSAGES = {
  BlockhashNotFound: 'Blockhash not found',
  AlreadyProcessed: 'This transaction has already been processed',
} as const;

/** Names of LiteSVM's (= Solana's) field-less transaction errors, by their enum value. */
const TRANSACTION_ERRORS = [
  'AccountInUse',
  'AccountLoadedTwice',
  'AccountNotFound',
  'ProgramAccountNotFound',
  'InsufficientFundsForFee',
  'InvalidAccountForFee',
  'AlreadyProcessed',
  'BlockhashNotFound',
  'CallChainTooDeep',
  'MissingSignatureForFee',
  'InvalidAccountIndex',
  'SignatureFailure',
  'InvalidProgramForExecution',
  'SanitizeFailure',
  'ClusterMaintenance',
  'AccountBorrowOutstanding',
  'WouldExceedMaxBlockCostLimit',
  'UnsupportedVersion',
  'InvalidWritableAccount',
  'WouldExceedMaxAccountCostLimit',
  'WouldExceedAccountDataBlockLimit',
  'TooManyAccountLocks',
  'AddressLookupTableNotFound',
  'InvalidAddressLookupTableOwner',
  'InvalidAddressLookupTableData',
  'InvalidAddressLookupTableIndex',
  'InvalidRentPayingAccount',
  'WouldExceedMaxVoteCostLimit',
  'WouldExceedAccountDataTotalLimit',
  'MaxLoadedAccountsDataSizeExceeded',
  'ResanitizationNeeded',
  'InvalidLoadedAccountsDataSizeLimit',
  'UnbalancedTransaction',
  'ProgramCacheHitMaxLimit',
  'CommitCancelled',
];

/** Names of the field-less instruction errors, by their enum value. */
const INSTRUCTION_ERRORS = [
  'GenericError',
  'InvalidArgument',
  'InvalidInstructionData',
  'InvalidAccountData',
  'AccountDataTooSmall',
  'InsufficientFunds',
  'IncorrectProgramId',
  'MissingRequiredSignature',
  'AccountAlreadyInitialized',
  'UninitializedAccount',
  'UnbalancedInstruction',
  'ModifiedProgramId',
  'ExternalAccountLamportSpend',
  'ExternalAccountDataModified',
  'ReadonlyLamportChange',
  'ReadonlyDataModified',
  'DuplicateAccountIndex',
  'ExecutableModified',
  'RentEpochModified',
  'NotEnoughAccountKeys',
  'AccountDataSizeChanged',
  'AccountNotExecutable',
  'AccountBorrowFailed',
  'AccountBorrowOutstanding',
  'DuplicateAccountOutOfSync',
  'InvalidError',
  'ExecutableDataModified',
  'ExecutableLamportChange',
  'ExecutableAccountNotRentExempt',
  'UnsupportedProgramId',
  'CallDepth',
  'MissingAccount',
  'ReentrancyNotAllowed',
  'MaxSeedLengthExceeded',
  'InvalidSeeds',
  'InvalidRealloc',
  'ComputationalBudgetExceeded',
  'PrivilegeEscalation',
  'ProgramEnvironmentSetupFailure',
  'ProgramFailedToComplete',
  'ProgramFailedToCompile',
  'Immutable',
  'IncorrectAuthority',
  'AccountNotRentExempt',
  'InvalidAccountOwner',
  'ArithmeticOverflow',
  'UnsupportedSysvar',
  'IllegalOwner',
  'MaxAccountsDataAllocationsExceeded',
  'MaxAccountsExceeded',
  'MaxInstructionTraceLengthExceeded',
  'BuiltinProgramsMustConsumeComputeUnits',
  'BorshIoError',
];
