/**
 * The payment of an x402 purchase (DESIGN §22): built by the stock `@x402/svm` client scheme
 * (`ExactSvmScheme`, the one a stock buyer uses) with the hot wallet as the transfer's authority,
 * from requirements the service accepted and rebuilt itself (core/purchases.ts
 * `judgeRequirements`), with a blockhash it fetched itself, so it knows when the payment can no
 * longer land.
 *
 * The hot wallet signs only a message that is exactly the purchase: the signer handed to the scheme
 * decodes the message and refuses (UncheckedPurchaseError) anything but, in this order, the compute
 * budget's unit limit and price (within the stock client's values), ONE TransferChecked of exactly
 * the held amount of the USDC mint from the hot wallet's token account to payTo's, with the hot
 * wallet as authority, and the memo; the seller's facilitator as fee payer (never the hot wallet:
 * it signs as the authority only, read-only), that blockhash, no address table. Whatever a future
 * stock client changes, or a request manages to smuggle in, the wallet signs nothing else.
 *
 * The key is the hot-wallet signer's (functions/rails/hot-wallet-signer.ts): the routes ask it for a
 * purchase's payment with the accepted requirements, and it builds, checks and signs the message
 * itself (`signPurchase`, run by functions/signer/sign.ts). Nothing here reads the secret.
 *
 * Import this only from x402 functions: it carries @solana/kit.
 */
import {
  address,
  createSolanaRpc,
  getBase58Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type KeyPairSigner,
  type ReadonlyUint8Array,
  type Signature,
  type Slot,
  type TransactionPartialSigner,
} from '@solana/kit';
import { getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';
import type { PaymentRequirements } from '@x402/core/types';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { config, onConfigReset } from '../config';
import type { AcceptedRequirements, SignedPurchase } from '../core/purchases';
import { X402UnavailableError } from '../core/x402';
import { hotWalletSigner } from '../rails/hot-wallet-signer';
import { secretUrl } from './facilitator';

const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
const TRANSFER_CHECKED = 12;
const USDC_DECIMALS = 6;
/** What the stock client asks (@x402/svm 2.27: 20,000 units at 1 micro-lamport): the seller's fee payer pays it, never the hot wallet. */
const MAX_COMPUTE_UNITS = 200_000;
const MAX_UNIT_PRICE_MICROLAMPORTS = 1_000_000n;

/** The hot wallet was asked to sign a message that is not exactly the purchase: never signed. */
export class UncheckedPurchaseError extends Error {
  constructor(why: string) {
    super(`the hot wallet signs only the purchase's transfer: ${why}`);
    this.name = 'UncheckedPurchaseError';
  }
}

/** What one purchase's message must be. */
export interface ExpectedPurchase {
  requirements: AcceptedRequirements;
  hotWallet: string;
  blockhash: string;
}

const ata = (owner: string, mint: string) =>
  getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(owner), true, TOKEN_PROGRAM_ID).toBase58();

/** Throws UncheckedPurchaseError unless `bytes` are exactly the message of the purchase `expected`; returns its memo. */
export function checkPurchaseMessage(bytes: ReadonlyUint8Array, expected: ExpectedPurchase): string {
  const fail = (why: string): never => {
    throw new UncheckedPurchaseError(why);
  };
  let message: ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>['decode']>;
  try {
    message = getCompiledTransactionMessageDecoder().decode(bytes);
  } catch {
    return fail('undecodable message');
  }
  if (message.version !== 0 || !('instructions' in message)) return fail('not a version 0 message');
  if ((message.addressTableLookups?.length ?? 0) > 0) return fail('address table lookups');
  const { requirements: r, hotWallet: hot } = expected;
  const accounts = message.staticAccounts.map(String);
  const { numSignerAccounts, numReadonlySignerAccounts, numReadonlyNonSignerAccounts } = message.header;
  if (numSignerAccounts !== 2 || numReadonlySignerAccounts !== 1) return fail('signers other than the fee payer and the authority');
  if (accounts[0] !== r.extra.feePayer || accounts[0] === hot) return fail('fee payer');
  if (accounts[1] !== hot) return fail('authority');
  if (new Set(accounts).size !== accounts.length) return fail('repeated account');
  const source = ata(hot, r.asset);
  const destination = ata(r.payTo, r.asset);
  const writable = accounts.slice(2, accounts.length - numReadonlyNonSignerAccounts).sort();
  if (writable.join() !== [source, destination].sort().join()) return fail('writable accounts');
  if (String(('lifetimeToken' in message ? message.lifetimeToken : '') ?? '') !== expected.blockhash) return fail('blockhash');
  const program = (i: { programAddressIndex: number }) => accounts[i.programAddressIndex];
  const data = (i: { data?: ReadonlyUint8Array }) => Buffer.from(i.data ?? new Uint8Array());
  const ix = message.instructions;
  if (ix.length !== 4) return fail('instruction count');
  const [limit, price, transfer, memo] = ix as [(typeof ix)[0], (typeof ix)[0], (typeof ix)[0], (typeof ix)[0]];
  const limitData = data(limit);
  if (program(limit) !== COMPUTE_BUDGET_PROGRAM || limitData.length !== 5 || limitData[0] !== 2 || (limit.accountIndices?.length ?? 0) > 0)
    return fail('compute unit limit');
  if (limitData.readUInt32LE(1) > MAX_COMPUTE_UNITS) return fail('compute unit limit');
  const priceData = data(price);
  if (program(price) !== COMPUTE_BUDGET_PROGRAM || priceData.length !== 9 || priceData[0] !== 3 || (price.accountIndices?.length ?? 0) > 0)
    return fail('compute unit price');
  if (priceData.readBigUInt64LE(1) > MAX_UNIT_PRICE_MICROLAMPORTS) return fail('compute unit price');
  const transferData = data(transfer);
  const transferAccounts = (transfer.accountIndices ?? []).map((i) => accounts[i]);
  if (program(transfer) !== TOKEN_PROGRAM_ID.toBase58()) return fail('token program');
  if (transferData.length !== 10 || transferData[0] !== TRANSFER_CHECKED) return fail('not a TransferChecked');
  if (transferData.readBigUInt64LE(1) !== BigInt(r.amount)) return fail('amount');
  if (transferData[9] !== USDC_DECIMALS) return fail('decimals');
  if (transferAccounts.join() !== [source, r.asset, destination, hot].join()) return fail('transfer accounts');
  if (program(memo) !== MEMO_PROGRAM || (memo.accountIndices?.length ?? 0) > 0) return fail('memo');
  const memoText = data(memo).toString('utf8');
  if (r.extra.memo !== undefined ? memoText !== r.extra.memo : !/^[0-9a-f]{32}$/.test(memoText)) return fail('memo');
  return memoText;
}

/** The hot wallet as a transaction signer that signs only the one expected purchase. */
function purchaseSigner(wallet: KeyPairSigner, expected: ExpectedPurchase): TransactionPartialSigner {
  return {
    address: wallet.address,
    async signTransactions(transactions, options) {
      for (const t of transactions) checkPurchaseMessage(t.messageBytes, expected);
      return wallet.signTransactions(transactions, options);
    },
  };
}

/** Has purchases built and signed (by the hot-wallet signer). */
export interface PurchaseSigner {
  hotWallet: string;
  sign(requirements: AcceptedRequirements, now: Date): Promise<SignedPurchase>;
}

let signer: Promise<PurchaseSigner> | undefined;

export function purchaseSignerFor(): Promise<PurchaseSigner> {
  signer ??= build().catch((error: unknown) => {
    signer = undefined;
    throw error;
  });
  return signer;
}

async function build(): Promise<PurchaseSigner> {
  const cfg = config();
  const hot = cfg.SOLANA_HOT_WALLET_ADDRESS;
  if (!hot || !cfg.USDC_MINT) throw new X402UnavailableError();
  return {
    hotWallet: hot,
    sign: (requirements, now) => hotWalletSigner().sign({ kind: 'purchase', requirements, signedAt: now.toISOString() }),
  };
}

/** The hot wallet as the purchase-building signer needs it, and the RPC it fetches blockhashes from. */
export interface PurchaseKey {
  wallet: KeyPairSigner;
  rpcUrl: string;
}

let keyRpc: { url: string; rpc: ReturnType<typeof createSolanaRpc> } | undefined;

/**
 * The signer's side (functions/signer/sign.ts): builds the purchase's payment with the stock client
 * scheme from `requirements`, with a blockhash fetched here, and signs it with the hot wallet only
 * if the message is exactly that purchase (checkPurchaseMessage), before and after signing.
 */
export async function signPurchase(key: PurchaseKey, requirements: AcceptedRequirements, now: Date): Promise<SignedPurchase> {
  const { wallet, rpcUrl } = key;
  const hot = wallet.address;
  if (keyRpc?.url !== rpcUrl) keyRpc = { url: rpcUrl, rpc: createSolanaRpc(rpcUrl) };
  const { rpc } = keyRpc;
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'finalized' }).send();
  const expected = { requirements, hotWallet: hot, blockhash: latest.blockhash };
  const scheme = new ExactSvmScheme(purchaseSigner(wallet, expected), { rpcUrl });
  // The blockhash is the service's: the stock client takes it from `extra` instead of asking the RPC again.
  const given = {
    ...requirements,
    extra: { ...requirements.extra, recentBlockhash: latest.blockhash, lastValidBlockHeight: String(latest.lastValidBlockHeight) },
  } as PaymentRequirements;
  const paymentPayload = await scheme.createPaymentPayload(2, given);
  const wire = (paymentPayload.payload as { transaction?: unknown }).transaction;
  if (typeof wire !== 'string') throw new UncheckedPurchaseError('no transaction in the payload');
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
  // Once more on the bytes answered, not only the bytes signed: they are the same message or the signature is worthless.
  const memo = checkPurchaseMessage(transaction.messageBytes, expected);
  const own = transaction.signatures[address(hot)];
  if (!own) throw new UncheckedPurchaseError('not signed by the hot wallet');
  return {
    paymentPayload: { x402Version: paymentPayload.x402Version, payload: paymentPayload.payload },
    authoritySignature: getBase58Decoder().decode(own),
    blockhash: latest.blockhash,
    lastValidBlockHeight: Number(latest.lastValidBlockHeight),
    memo,
    signedAt: now.toISOString(),
  };
}

/** The RPC URL the purchase-building signer uses: given (local), or the secret's (AWS). */
export async function purchaseRpcUrl(): Promise<string> {
  return config().SOLANA_RPC_URL ?? (await secretUrl());
}

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
  signer = undefined;
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
    async findLanded(signed, opts = {}) {
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
          .filter(
            (s) => found.has(s.authoritySignature) || ((exhausted || oldest < floor(s)) && !unread.some((memo) => memo.includes(s.memo))),
          )
          .map((s) => s.authoritySignature),
      );
      return { found, covered, read: seen };
    },
  };
}
