/**
 * What settling x402 purchases asks the chain (DESIGN §22; the reconciler's, the receipt's, the
 * operator's): no key. Whether a purchase's transfer landed under its transaction, and the search
 * of the hot wallet token account's history for transfers carrying the hot wallet's signatures,
 * with what the search can vouch for (a signature not found in a span read in full is not on
 * chain). Apart from the signer (purchase-signer.ts) because it reads the chain and signs nothing.
 *
 * Import this only from x402 functions: it carries @solana/kit.
 */
import { address, createSolanaRpc, type Signature, type Slot } from '@solana/kit';
import { config, onConfigReset } from '../config';
import type { SignedPurchase } from '../core/purchases';
import { X402UnavailableError } from '../core/x402';
import { secretUrl } from './facilitator';
import { ata } from './purchase-signer';

/** A purchase's transfer as the chain shows it at `confirmed`: the signature it landed under, and its error (null: it moved the money). */
export interface LandedPurchase {
  transaction: string;
  err: unknown;
}

/**
 * How far back a purchase's transfer can be: a blockhash is valid for 150 blocks after its own
 * (`lastValidBlockHeight` = its height + 150), and a block's slot is never below its height, so no
 * slot under `lastValidBlockHeight` − 150 holds it. Twice that, for margin.
 */
const BLOCKHASH_SPAN = 300;
/** A search reads at most this many of the token account's signatures (pages of 1,000): a run stays bounded. */
export const MAX_SEARCHED_SIGNATURES = 20_000;

/** What a search of the hot wallet token account's transactions found, and what it can vouch for. */
export interface LandedSearch {
  /** The landed transactions carrying one of the hot wallet signatures asked for, by that signature. */
  found: Map<string, LandedPurchase>;
  /**
   * The signatures whose every slot they could have landed in was read (back past the slot of their
   * blockhash, or to the account's first transaction): one of them not found is not on chain.
   */
  covered: Set<string>;
  /** How many of the account's signatures it read. */
  read: number;
}

/** What settling purchases asks the chain; no key (the reconciler's and the receipt's). */
export interface PurchaseChain {
  /**
   * The finalized block height (past a payment's lastValidBlockHeight there, it can never land) and
   * that block's slot, from one node: the search asks for a node at least that recent.
   */
  finalizedTip(): Promise<{ height: number; slot: number }>;
  /** The transaction `transaction`, when it is on chain at confirmed and carries the hot wallet's `authority` signature. */
  landedAs(transaction: string, authority: string): Promise<LandedPurchase | undefined>;
  /**
   * The landed transactions of the hot wallet's token account that carry one of these hot wallet
   * signatures, newest first, paged with `before` until every one is found or the pages are older
   * than the slot any of them could have landed in (at most `maxSignatures`, MAX_SEARCHED_SIGNATURES;
   * Infinity: the whole history, the operator's), or until `stopAt` (epoch ms: the caller's time is
   * up; what was not read covers nothing). Candidates are narrowed by their memo (the stock client's
   * random nonce, or the seller's memo), then each is read whole.
   */
  findLanded(
    signed: readonly Pick<SignedPurchase, 'authoritySignature' | 'memo' | 'lastValidBlockHeight'>[],
    opts?: { pageSize?: number; maxSignatures?: number; minContextSlot?: number; stopAt?: number },
  ): Promise<LandedSearch>;
}

let chain: Promise<PurchaseChain> | undefined;
onConfigReset(() => {
  chain = undefined;
});

export function purchaseChain(): Promise<PurchaseChain> {
  chain ??= buildChain().catch((error: unknown) => {
    chain = undefined;
    throw error;
  });
  return chain;
}

async function buildChain(): Promise<PurchaseChain> {
  const cfg = config();
  const hot = cfg.SOLANA_HOT_WALLET_ADDRESS;
  if (!hot || !cfg.USDC_MINT) throw new X402UnavailableError();
  const rpc = createSolanaRpc(cfg.SOLANA_RPC_URL ?? (await secretUrl()));
  const tokenAccount = ata(hot, cfg.USDC_MINT);
  const read = async (transaction: string): Promise<{ signatures: string[]; err: unknown } | undefined> => {
    const tx = await rpc
      .getTransaction(transaction as Signature, { commitment: 'confirmed', encoding: 'json', maxSupportedTransactionVersion: 0 })
      .send();
    if (!tx) return undefined;
    return { signatures: tx.transaction.signatures.map(String), err: tx.meta?.err ?? null };
  };
  return {
    async finalizedTip() {
      const tip = await rpc.getEpochInfo({ commitment: 'finalized' }).send();
      return { height: Number(tip.blockHeight), slot: Number(tip.absoluteSlot) };
    },
    async landedAs(transaction, authority) {
      const tx = await read(transaction);
      return tx?.signatures.includes(authority) ? { transaction, err: tx.err } : undefined;
    },
    findLanded: (signed, opts = {}) => findLanded({ rpc, tokenAccount, read }, signed, opts),
  };
}

/** What a search reads the chain with: the RPC, the hot wallet's token account, and a transaction's signatures and error. */
interface SearchChain {
  rpc: ReturnType<typeof createSolanaRpc>;
  tokenAccount: string;
  read(transaction: string): Promise<{ signatures: string[]; err: unknown } | undefined>;
}

/** `PurchaseChain.findLanded`: the token account's signatures, newest first, page by page, until the question is answered. */
async function findLanded(
  { rpc, tokenAccount, read }: SearchChain,
  signed: Parameters<PurchaseChain['findLanded']>[0],
  opts: NonNullable<Parameters<PurchaseChain['findLanded']>[1]>,
): Promise<LandedSearch> {
  const pageSize = opts.pageSize ?? 1_000;
  const maxSignatures = opts.maxSignatures ?? MAX_SEARCHED_SIGNATURES;
  const found = new Map<string, LandedPurchase>();
  const wanted = new Set(signed.map((s) => s.authoritySignature));
  const memos = signed.map((s) => s.memo);
  const floor = (s: (typeof signed)[number]) => s.lastValidBlockHeight - BLOCKHASH_SPAN;
  let before: string | undefined;
  let seen = 0;
  /** The slot of the oldest signature read: every newer one was read. */
  let oldest = Number.POSITIVE_INFINITY;
  let exhausted = false;
  const unread: string[] = [];
  const open = () => signed.filter((s) => !found.has(s.authoritySignature) && oldest >= floor(s));
  const late = () => opts.stopAt !== undefined && Date.now() >= opts.stopAt;
  while (seen < maxSignatures && open().length > 0 && !late()) {
    const limit = Math.min(pageSize, maxSignatures - seen);
    const page = await rpc
      .getSignaturesForAddress(address(tokenAccount), {
        commitment: 'confirmed',
        limit,
        ...(before ? { before: before as Signature } : {}),
        // A node behind the finalized tip the height was read at lists too little, and its short
        // page would pass for the account's whole history (the RPC URL may be a load balancer).
        ...(opts.minContextSlot !== undefined ? { minContextSlot: BigInt(opts.minContextSlot) as Slot } : {}),
      })
      .send();
    seen += page.length;
    const last = page[page.length - 1];
    if (last) {
      before = String(last.signature);
      oldest = Number(last.slot);
    }
    // A node answers fewer than asked only at the account's first transaction.
    if (page.length < limit) exhausted = true;
    for (const entry of page) {
      // An RPC node lists a memo as "[<length>] <text>": a candidate is one whose memo holds one of ours.
      const memo = entry.memo ?? '';
      if (!memos.some((m) => memo.includes(m))) continue;
      // Out of time, a candidate is left unread: like one a node behind cannot read yet, it proves nothing.
      const tx = late() ? undefined : await read(String(entry.signature));
      // Listed but not readable (a node behind the one that listed it): it may be ours, so proves nothing.
      if (!tx) unread.push(memo);
      for (const s of tx?.signatures ?? []) {
        if (wanted.has(s) && tx) found.set(s, { transaction: String(entry.signature), err: tx.err });
      }
    }
    if (exhausted) break;
  }
  const covered = new Set(
    signed
      .filter((s) => found.has(s.authoritySignature) || ((exhausted || oldest < floor(s)) && !unread.some((memo) => memo.includes(s.memo))))
      .map((s) => s.authoritySignature),
  );
  return { found, covered, read: seen };
}
