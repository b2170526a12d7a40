/**
 * The stock x402 facilitator, built once per container: `@x402/core`'s x402Facilitator with
 * `@x402/svm`'s `exact` scheme registered for the configured network. The scheme does every check
 * of the transaction (layout, compute budget, mint, recipient, amount, fee-payer isolation,
 * simulation), signs as the fee payer (the hot wallet), sends and confirms; the service never
 * verifies a transaction itself (docs/x402.md).
 *
 * Least privilege: the read-only routes (verify, supported) build it with a signer that knows only
 * the fee payer's public address and can sign nothing; only settle (and the reconciler) read the
 * hot wallet's secret. Import this only from x402 functions: it carries @solana/kit.
 */

import {
  type Address,
  address,
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  getBase64Encoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  type MessagePartialSigner,
  type Signature,
  type TransactionSigner,
} from '@solana/kit';
import { x402Facilitator } from '@x402/core/facilitator';
import type { Network, PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from '@x402/core/types';
import { decodeTransactionFromPayload, getTokenPayerFromTransaction, toFacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/facilitator';
import bs58 from 'bs58';
import { config, onConfigReset } from '../config';
import { X402UnavailableError } from '../core/x402';
import { RailConfigError } from '../rails/errors';
import { readRailSecret } from '../rails/rail-secret';

/** What the use cases need of the chain side of x402 (tests may stand in a recording double). */
export interface Facilitator {
  network: string;
  feePayer: string;
  supported(): SupportedResponse;
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse>;
  /**
   * The signature the transaction will have once the fee payer signed it (ed25519 is
   * deterministic, so this is the signature it lands under); undefined when it cannot be decoded.
   */
  signatureOf(payload: PaymentPayload): Promise<string | undefined>;
  /** The buyer (the transfer's authority) of the payload's transaction; "" when it has none. */
  payerOf(payload: PaymentPayload): string;
  /** The transaction's state on chain: confirmed (or finalized), failed there, or not seen. */
  chainStatus(signature: string): Promise<ChainStatus>;
}

export type ChainStatus = { kind: 'confirmed'; finalized: boolean } | { kind: 'failed'; error: string } | { kind: 'unknown' };

type KitSigner = TransactionSigner & MessagePartialSigner;

let readOnly: Promise<Facilitator> | undefined;
let signing: Promise<Facilitator> | undefined;
onConfigReset(() => {
  readOnly = undefined;
  signing = undefined;
});

/** The facilitator for verify and supported: the fee payer's address only. */
export function readOnlyFacilitator(): Promise<Facilitator> {
  readOnly ??= build(false).catch((error: unknown) => {
    readOnly = undefined;
    throw error;
  });
  return readOnly;
}

/** The facilitator for settle: signs as the fee payer with the hot wallet's secret. */
export function signingFacilitator(): Promise<Facilitator> {
  signing ??= build(true).catch((error: unknown) => {
    signing = undefined;
    throw error;
  });
  return signing;
}

async function build(withSecret: boolean): Promise<Facilitator> {
  const cfg = config();
  const feePayer = cfg.SOLANA_HOT_WALLET_ADDRESS;
  // Not set on a fresh deployment until the operator has made the hot wallet (docs/deploy.md).
  if (!feePayer || !cfg.X402_PAY_TO) throw new X402UnavailableError();
  const rpcUrl = cfg.SOLANA_RPC_URL ?? (await secretUrl());
  const signer = withSecret ? await hotWallet(feePayer) : addressOnly(address(feePayer));
  const svmSigner = toFacilitatorSvmSigner(signer, { defaultRpcUrl: rpcUrl });
  const network = cfg.X402_NETWORK as Network;
  const facilitator = new x402Facilitator().register(network, new ExactSvmScheme(svmSigner));
  const rpc = createSolanaRpc(rpcUrl);
  const decoder = getTransactionDecoder();
  const base64 = getBase64Encoder();
  return {
    network,
    feePayer,
    supported: () => facilitator.getSupported() as SupportedResponse,
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    async signatureOf(payload) {
      const transaction = (payload.payload as { transaction?: unknown }).transaction;
      if (typeof transaction !== 'string') return undefined;
      try {
        const signed = await svmSigner.signTransaction(transaction, address(feePayer), network);
        return getSignatureFromTransaction(decoder.decode(base64.encode(signed)));
      } catch {
        return undefined;
      }
    },
    payerOf(payload) {
      try {
        return getTokenPayerFromTransaction(decodeTransactionFromPayload(payload.payload as { transaction: string })) ?? '';
      } catch {
        return '';
      }
    },
    async chainStatus(signature) {
      const { value } = await rpc.getSignatureStatuses([signature as Signature], { searchTransactionHistory: true }).send();
      const status = value[0];
      if (!status) return { kind: 'unknown' };
      if (status.err) return { kind: 'failed', error: JSON.stringify(status.err, (_, v) => (typeof v === 'bigint' ? v.toString() : v)) };
      if (status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized') {
        return { kind: 'confirmed', finalized: status.confirmationStatus === 'finalized' };
      }
      return { kind: 'unknown' };
    },
  };
}

/** A signer that knows the fee payer's address and refuses to sign: verify and supported need no more. */
function addressOnly(feePayer: Address): KitSigner {
  const refuse = async (): Promise<never> => {
    throw new Error('this function holds no fee-payer key');
  };
  return { address: feePayer, signMessages: refuse, signTransactions: refuse } as unknown as KitSigner;
}

/** The hot wallet (fee payer) from its secret: given directly (local) or from Secrets Manager (AWS). */
async function hotWallet(expected: string): Promise<KitSigner> {
  const cfg = config();
  const text =
    cfg.SOLANA_HOT_WALLET_SECRET ??
    (cfg.SOLANA_HOT_WALLET_SECRET_ARN ? await readRailSecret('SOLANA_HOT_WALLET_SECRET_ARN', cfg.SOLANA_HOT_WALLET_SECRET_ARN) : undefined);
  if (!text) throw new RailConfigError('set SOLANA_HOT_WALLET_SECRET or SOLANA_HOT_WALLET_SECRET_ARN');
  const trimmed = text.trim();
  let bytes: Uint8Array;
  try {
    bytes = trimmed.startsWith('[') ? Uint8Array.from(JSON.parse(trimmed) as number[]) : bs58.decode(trimmed);
  } catch {
    // Never echo the input: it is the hot wallet's key.
    throw new RailConfigError('hot wallet secret is neither base58 nor a JSON byte array');
  }
  if (bytes.length !== 64) throw new RailConfigError(`hot wallet secret must be 64 bytes, got ${bytes.length}`);
  const signer = await createKeyPairSignerFromBytes(bytes);
  if (signer.address !== expected) throw new RailConfigError("SOLANA_HOT_WALLET_ADDRESS is not the hot wallet secret's address");
  return signer;
}

async function secretUrl(): Promise<string> {
  const arn = config().SOLANA_RPC_URL_SECRET_ARN;
  if (!arn) throw new RailConfigError('set SOLANA_RPC_URL or SOLANA_RPC_URL_SECRET_ARN');
  const url = (await readRailSecret('SOLANA_RPC_URL_SECRET_ARN', arn)).trim();
  if (!URL.canParse(url)) throw new RailConfigError('SOLANA_RPC_URL_SECRET_ARN does not hold a URL');
  return url;
}

/** Base58 check for addresses in requests (what the scheme compares is the string itself). */
export const isBase58Address = (text: string): boolean => {
  try {
    return bs58.decode(text).length === 32;
  } catch {
    return false;
  }
};
