/**
 * The Solana rail's side of the JSON-RPC node: the connection, the hot wallet, the mint and its
 * token program, read once per container (`connectRail`), and `solanaCall`, which turns any RPC
 * failure into a RailUnavailableError ("not decided, try again later"). The protocol that uses them
 * is solana.rail.ts.
 */
import {
  ACCOUNT_SIZE,
  ExtensionType,
  getAccountLen,
  getAccountTypeOfMintType,
  getAssociatedTokenAddressSync,
  getExtensionTypes,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  unpackMint,
} from '@solana/spl-token';
import { Connection, type PublicKey, type SignatureStatus } from '@solana/web3.js';
import { RailConfigError, RailUnavailableError } from './errors';
import type { HotWalletSigner } from './hot-wallet-signer';
import { USDC_DECIMALS, walletAddress } from './solana.keys';

export type SolanaCommitment = 'processed' | 'confirmed' | 'finalized';

/** What a payout needs of the chain, read once per container. */
export interface Ready {
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

/** Where and how to connect: the rail resolves each from its options or the configuration. */
export interface ConnectOptions {
  rpcUrl: string | undefined;
  mint: string | undefined;
  commitment: SolanaCommitment;
  signer: HotWalletSigner;
  /** Per RPC request. A hung node is a transient error, not a hung worker. */
  rpcTimeoutMs: number;
}

/** One RPC call; any failure is the node's, so "unavailable" (retried), never a decision. */
export async function solanaCall<T>(method: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new RailUnavailableError(`solana rpc ${method} failed`, { cause: error });
  }
}

/** Connection, hot wallet and mint: a RailConfigError for what the operator must fix. */
export async function connectRail(options: ConnectOptions): Promise<Ready> {
  const { rpcUrl, mint: mintText } = options;
  if (!rpcUrl) throw new RailConfigError('SOLANA_RPC_URL is not set');
  if (!mintText) throw new RailConfigError('USDC_MINT is not set');
  const mint = walletAddress(mintText, false);
  if (!mint) throw new RailConfigError('USDC_MINT is not a Solana address');
  const hotWallet = walletAddress(await options.signer.sign({ kind: 'address' }), false);
  if (!hotWallet) throw new RailConfigError("the hot-wallet signer's address is not a Solana address");

  const timeoutMs = options.rpcTimeoutMs;
  const connection = new Connection(rpcUrl, {
    commitment: options.commitment,
    disableRetryOnRateLimit: true,
    fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) }),
  });
  const mintInfo = await solanaCall('getAccountInfo', () => connection.getAccountInfo(mint));
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
  const hotWalletRentExempt = await solanaCall('getMinimumBalanceForRentExemption', () => connection.getMinimumBalanceForRentExemption(0));
  return { connection, hotWallet, mint, tokenProgram, hotAta, hotWalletRentExempt, tokenAccountSize };
}

const COMMITMENT_RANK: Record<SolanaCommitment, number> = { processed: 0, confirmed: 1, finalized: 2 };

/** Whether a signature's status has reached `wanted`. */
export function reached(status: SignatureStatus, wanted: SolanaCommitment): boolean {
  // `confirmations: null` means rooted (finalized) on nodes that omit confirmationStatus.
  const actual: SolanaCommitment = status.confirmationStatus ?? (status.confirmations === null ? 'finalized' : 'processed');
  return COMMITMENT_RANK[actual] >= COMMITMENT_RANK[wanted];
}

/** Status lookups one call makes for a node that has caught up with the finalized tip before it
 * answers `pending` (the reconciler asks again later): a node behind a load balancer lags briefly. */
const STATUS_READS = 3;

/** A signature's status (searching the node's history by default), and the slot the answering node had reached. */
export async function statusAt(
  connection: Connection,
  signature: string,
  searchTransactionHistory = true,
): Promise<{ status: SignatureStatus | null; contextSlot: number }> {
  const res = await solanaCall('getSignatureStatuses', () => connection.getSignatureStatuses([signature], { searchTransactionHistory }));
  return { status: res.value[0] ?? null, contextSlot: res.context.slot };
}

/**
 * The status lookup of `first` (or another, up to STATUS_READS in all, a poll interval apart)
 * made by a node whose context slot is at least `slot`; 'lagging' when every node asked was
 * behind it. A status found by a lagging node counts (it landed), its "unknown" does not.
 */
export async function statusSeenFrom(
  connection: Connection,
  signature: string,
  slot: number,
  first: { status: SignatureStatus | null; contextSlot: number },
  pollIntervalMs: number,
): Promise<{ status: SignatureStatus | null } | 'lagging'> {
  let answer = first;
  for (let read = 1; ; read++) {
    if (answer.status || answer.contextSlot >= slot) return answer;
    if (read >= STATUS_READS) return 'lagging';
    await sleep(pollIntervalMs);
    answer = await statusAt(connection, signature);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
