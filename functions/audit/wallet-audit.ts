/**
 * Reads what the ledger audit's wallet reconciliation (chain-checks.ts `reconcileWallets`) needs
 * from the chain: the service's wallets (hot wallet, deposit wallet, x402 treasury: the addresses
 * of the service's configuration), the whole history of each one's USDC token account
 * (`getSignaturesForAddress`, 1,000 a page), every transaction in it (`getTransaction`, batched)
 * and each balance now, all at `confirmed` (what settle and payouts count as done).
 *
 * Cost: one listing request per 1,000 transactions per wallet, one batched request per 100
 * transactions, one balance read per wallet. A finalized transaction never changes, so this
 * process keeps the ones it has read (a test file audits after each test).
 */
import { config } from '../config';
import {
  associatedTokenAddress,
  type DepositTransaction,
  otherRecipients,
  type SignatureInfo,
  SolanaDepositsClient,
  tokenDeltas,
} from '../rails/solana.deposits';
import { solanaRpcUrl } from '../rails/solana.json-rpc';
import type { AuditedWallet, ChainTransfer, WalletChain, WalletRole } from './chain-checks';

export interface WalletAuditOptions {
  /** The RPC client; by default SOLANA_RPC_URL (or its secret), as the service reads the chain. */
  solana?: SolanaDepositsClient;
  /** Wallets that are the operator's own: money swept to them is no drain. */
  operatorWallets?: readonly string[];
  /** Most signatures read of one wallet's history (default 100,000). */
  maxSignatures?: number;
}

const PAGE = 1_000;
const DEFAULT_MAX_SIGNATURES = 100_000;

/** Finalized transactions already read, by RPC URL and signature (they never change). */
const finalized = new Map<string, DepositTransaction>();
const FINALIZED_KEPT = 50_000;

/** The wallets to reconcile, from the configuration: undefined when it names no chain to read. */
export function configuredWallets(): { mint: string; wallets: Map<string, WalletRole[]> } | undefined {
  const cfg = config();
  if (!cfg.USDC_MINT || !(cfg.SOLANA_RPC_URL || cfg.SOLANA_RPC_URL_SECRET_ARN)) return undefined;
  const wallets = new Map<string, WalletRole[]>();
  const add = (address: string | undefined, role: WalletRole) => {
    if (address) wallets.set(address, [...(wallets.get(address) ?? []), role]);
  };
  add(cfg.SOLANA_HOT_WALLET_ADDRESS, 'hot wallet');
  add(cfg.SOLANA_DEPOSIT_ADDRESS, 'deposit wallet');
  add(cfg.X402_PAY_TO, 'x402 treasury');
  return wallets.size === 0 ? undefined : { mint: cfg.USDC_MINT, wallets };
}

/** Everything the reconciliation reads from the chain. Throws when the chain cannot be read. */
export async function readWalletChain(opts: WalletAuditOptions = {}): Promise<WalletChain> {
  const configured = configuredWallets();
  if (!configured) throw new Error('no chain to reconcile: USDC_MINT, SOLANA_RPC_URL (or its secret) and a wallet address are needed');
  const { mint } = configured;
  const solana = opts.solana ?? new SolanaDepositsClient(solanaRpcUrl);
  // Whose transactions the kept ones are: a given client is its own chain.
  const chainId = opts.solana ? 'given' : await solanaRpcUrl();
  const max = opts.maxSignatures ?? DEFAULT_MAX_SIGNATURES;

  const listed = await Promise.all(
    [...configured.wallets].map(async ([address, roles]) => {
      const tokenAccount = associatedTokenAddress(address, mint);
      const [history, balance] = await Promise.all([
        listHistory(solana, tokenAccount, max),
        solana.tokenAccountBalance(tokenAccount, 'confirmed'),
      ]);
      const wallet: AuditedWallet = {
        address,
        roles,
        tokenAccount,
        balance: balance ?? 0n,
        signatures: history.signatures.map((s) => s.signature),
        complete: history.complete,
      };
      return { wallet, history: history.signatures };
    }),
  );
  const wallets = listed.map((l) => l.wallet);
  const isFinal = new Map(listed.flatMap((l) => l.history.map((s) => [s.signature, s.confirmationStatus === 'finalized'] as const)));
  const key = (signature: string) => `${chainId} ${signature}`;
  const toRead = [...isFinal.keys()].filter((s) => !finalized.has(key(s)));
  const read = await solana.transactions(toRead, 'confirmed');
  const audited = new Set(wallets.map((w) => w.address));
  const transfers = new Map<string, ChainTransfer | undefined>();
  for (const [signature, final] of isFinal) {
    const tx = finalized.get(key(signature)) ?? read.get(signature);
    if (tx && final) keep(key(signature), tx);
    transfers.set(
      signature,
      tx && {
        signature,
        failed: tx.meta?.err !== null && tx.meta?.err !== undefined,
        deltas: tokenDeltas(tx, mint, audited),
        recipients: otherRecipients(tx, mint, audited),
      },
    );
  }
  return { mint, wallets, transfers, operatorWallets: new Set(opts.operatorWallets ?? []) };
}

/** A token account's signatures, newest first, page by page, until its first transaction or `max`. */
async function listHistory(solana: SolanaDepositsClient, account: string, max: number) {
  const signatures: SignatureInfo[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await solana.signaturesFor(account, { limit: PAGE, commitment: 'confirmed', ...(before ? { before } : {}) });
    signatures.push(...page);
    if (page.length < PAGE) return { signatures, complete: true };
    if (signatures.length >= max) return { signatures, complete: false };
    before = page.at(-1)?.signature;
  }
}

function keep(key: string, tx: DepositTransaction): void {
  if (finalized.size >= FINALIZED_KEPT) finalized.clear();
  finalized.set(key, tx);
}
