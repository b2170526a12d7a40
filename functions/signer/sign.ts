/**
 * The hot-wallet signer (DESIGN §24): the one piece of code that holds the hot wallet's secret. On
 * AWS it is a Lambda function of its own (./handler.ts; only its role may read the secret, and only
 * the money paths may invoke it: lib/signer.ts); locally the same code runs in-process behind the
 * same interface (functions/rails/hot-wallet-signer.ts `useInProcessSigner`).
 *
 * A signature is the last step: each request is checked here, whatever its caller checked, and the
 * key signs only bytes that passed:
 * - `payout`: the message the payout rail built must be exactly that payout's transfer (./payout-message.ts);
 * - `purchase`: the requirements must be the service's kind (exact, our network, the USDC mint, a
 *   positive amount, a payee other than the hot wallet), and the message is built here and checked
 *   before and after signing (functions/x402/purchase-signer.ts `signPurchase`);
 * - `x402-settlement`: the payment is verified again here (the treasury policy that does not name
 *   the agent, then every check of the facilitator's verify: version, the fee payer in no
 *   instruction, the stock scheme's layout, amounts, caps and simulation), its fee payer must be
 *   the hot wallet, and only then is its message signed.
 */
import {
  createKeyPairSignerFromBytes,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type KeyPairSigner,
  signBytes,
} from '@solana/kit';
import { PublicKey } from '@solana/web3.js';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import bs58 from 'bs58';
import { config, onConfigReset } from '../config';
import type { AcceptedRequirements } from '../core/purchases';
import { X402UnavailableError } from '../core/x402';
import { RailConfigError } from '../rails/errors';
import type { HotWalletSigner, SignRequest, SignResults } from '../rails/hot-wallet-signer';
import { readRailSecret } from '../rails/rail-secret';
import { parseSecretKey } from '../rails/solana.rail';
import { isBase58Address, readOnlyFacilitator } from '../x402/facilitator';
import { purchaseRpcUrl, signPurchase } from '../x402/purchase-signer';
import { checkPayoutMessage } from './payout-message';

/** An x402 settlement or purchase the signer will not sign: its name says which check refused it. */
export class UncheckedSignRequestError extends Error {
  constructor(what: 'x402-settlement' | 'purchase', why: string) {
    super(`the hot wallet signs only a checked ${what}: ${why}`);
    this.name = what === 'purchase' ? 'UncheckedPurchaseRequestError' : 'UncheckedSettlementError';
  }
}

/** The hot wallet's secret: given directly (local) or from Secrets Manager (AWS). */
async function defaultSecret(): Promise<string> {
  const { SOLANA_HOT_WALLET_SECRET, SOLANA_HOT_WALLET_SECRET_ARN } = config();
  if (SOLANA_HOT_WALLET_SECRET) return SOLANA_HOT_WALLET_SECRET;
  if (SOLANA_HOT_WALLET_SECRET_ARN) return readRailSecret('SOLANA_HOT_WALLET_SECRET_ARN', SOLANA_HOT_WALLET_SECRET_ARN);
  throw new RailConfigError('neither SOLANA_HOT_WALLET_SECRET nor SOLANA_HOT_WALLET_SECRET_ARN is set');
}

/** The key, checked against SOLANA_HOT_WALLET_ADDRESS where that is set (what every other function calls the hot wallet). */
async function loadKey(secret: () => Promise<string>): Promise<KeyPairSigner> {
  const keypair = parseSecretKey(await secret());
  const wallet = await createKeyPairSignerFromBytes(keypair.secretKey);
  const expected = config().SOLANA_HOT_WALLET_ADDRESS;
  if (expected && wallet.address !== expected)
    throw new RailConfigError("SOLANA_HOT_WALLET_ADDRESS is not the hot wallet secret's address");
  return wallet;
}

/**
 * Signs a copy of `bytes` with a buffer of its own: @solana/kit 5's signBytes reads the view's
 * whole underlying ArrayBuffer, and a small Buffer from `Buffer.from(…, 'base64')` is a slice of
 * Node's shared pool, so it signed the wrong bytes (the rail's serialize() refused the signature).
 */
const signature = async (wallet: KeyPairSigner, bytes: Uint8Array): Promise<string> =>
  bs58.encode(await signBytes(wallet.keyPair.privateKey, new Uint8Array(bytes)));

/** What a signer is built from: the secret (default SOLANA_HOT_WALLET_SECRET(_ARN)) and the USDC mint (default USDC_MINT). */
export interface KeySignerOptions {
  secret?: () => Promise<string>;
  mint?: string;
}

/**
 * A signer over the hot wallet's secret, read once and kept (retried on the next request if
 * reading it failed).
 */
export function keySigner(opts: KeySignerOptions = {}): HotWalletSigner {
  const secret = opts.secret ?? defaultSecret;
  let key: Promise<KeyPairSigner> | undefined;
  const wallet = () => {
    key ??= loadKey(secret).catch((error: unknown) => {
      key = undefined;
      throw error;
    });
    return key;
  };
  return {
    async sign<R extends SignRequest>(request: R): Promise<SignResults[R['kind']]> {
      return (await signChecked(await wallet(), request, opts.mint)) as SignResults[R['kind']];
    },
  };
}

async function signChecked(wallet: KeyPairSigner, request: SignRequest, usdcMint?: string): Promise<SignResults[SignRequest['kind']]> {
  switch (request.kind) {
    case 'address':
      return wallet.address;
    case 'payout': {
      const mint = usdcMint ?? config().USDC_MINT;
      if (!mint) throw new RailConfigError('USDC_MINT is not set');
      const message = Buffer.from(request.message, 'base64');
      checkPayoutMessage(message, request.payout, new PublicKey(wallet.address), new PublicKey(mint));
      return signature(wallet, message);
    }
    case 'purchase':
      checkPurchaseRequirements(request.requirements, wallet.address);
      return signPurchase({ wallet, rpcUrl: await purchaseRpcUrl() }, request.requirements, new Date(request.signedAt));
    case 'x402-settlement':
      return signSettlement(wallet, request.payload, request.requirements);
  }
}

/** What a purchase may pay: the service's kind of requirements (core/purchases.ts judgeRequirements made them so). */
function checkPurchaseRequirements(r: AcceptedRequirements, hotWallet: string): void {
  const cfg = config();
  const fail = (why: string): never => {
    throw new UncheckedSignRequestError('purchase', why);
  };
  if (!cfg.USDC_MINT || !cfg.X402_NETWORK) throw new X402UnavailableError();
  if (r.scheme !== 'exact') fail('scheme');
  if (r.network !== cfg.X402_NETWORK) fail('network');
  if (r.asset !== cfg.USDC_MINT) fail('asset');
  if (!/^[1-9]\d{0,15}$/.test(r.amount)) fail('amount');
  if (!isBase58Address(r.payTo) || r.payTo === hotWallet) fail('payTo');
  if (!isBase58Address(r.extra.feePayer) || r.extra.feePayer === hotWallet) fail('fee payer');
}

/** The fee payer's signature of a payment that passes every check here. */
async function signSettlement(wallet: KeyPairSigner, payload: PaymentPayload, requirements: PaymentRequirements): Promise<string> {
  const cfg = config();
  const fail = (why: string): never => {
    throw new UncheckedSignRequestError('x402-settlement', why);
  };
  // The treasury policy (use-cases/x402-facilitator/x402-policy.ts checkPolicy, all of it that does not name the agent).
  const policy = () => {
    if (requirements.scheme !== 'exact') return { reason: 'unsupported_scheme', message: 'scheme' };
    if (requirements.network !== cfg.X402_NETWORK) return { reason: 'network_mismatch', message: 'network' };
    if (requirements.payTo !== cfg.X402_PAY_TO) return { reason: 'recipient_mismatch', message: 'payTo' };
    if (requirements.asset !== cfg.USDC_MINT) return { reason: 'mint_mismatch', message: 'asset' };
    if ((requirements.extra as { feePayer?: unknown } | undefined)?.feePayer !== wallet.address)
      return { reason: 'fee_payer_mismatch', message: 'fee payer' };
    return undefined;
  };
  const verdict = await (await readOnlyFacilitator()).verify(payload, requirements, policy);
  if (!verdict.isValid) fail(`${verdict.invalidReason ?? 'invalid'}${verdict.invalidMessage ? `: ${verdict.invalidMessage}` : ''}`);
  const wire = (payload.payload as { transaction?: unknown }).transaction;
  if (typeof wire !== 'string') return fail('no transaction');
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
  const message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
  if (String(message.staticAccounts[0]) !== wallet.address) fail('fee payer');
  return signature(wallet, new Uint8Array(transaction.messageBytes));
}

let inProcess: HotWalletSigner | undefined;
onConfigReset(() => {
  inProcess = undefined;
});

/** The signer as the local stack runs it in-process: the same code as the function, reading the configured secret. */
export function inProcessSigner(): HotWalletSigner {
  inProcess ??= keySigner();
  return inProcess;
}
