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

export const ata = (owner: string, mint: string) =>
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
onConfigReset(() => {
  signer = undefined;
});

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
