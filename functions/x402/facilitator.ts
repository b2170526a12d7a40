/**
 * The stock x402 facilitator, built once per container: `@x402/core`'s x402Facilitator with
 * `@x402/svm`'s `exact` scheme registered for the configured network. The scheme does every check
 * of the transaction (layout, compute budget, mint, recipient, amount, memo, simulation) but one: its
 * layout lets trailing Lighthouse and memo instructions name the fee payer, so verify refuses that
 * first (`feePayerRefusal`). The scheme signs as the fee payer (the hot wallet), sends and confirms;
 * the service writes no verifier of its own beyond that (docs/x402.md). It is given caps on what a transaction may make the
 * fee payer spend (X402_MAX_COMPUTE_UNITS, X402_MAX_PRIORITY_FEE_MICROLAMPORTS, X402_MAX_SIGNATURES):
 * the buyer writes the compute budget, the hot wallet pays for it.
 *
 * The verified-message gate: the hot wallet signs only a message whose bytes passed every check in
 * this process. `verify` is the one way in: the service's own checks (given by the caller: policy,
 * seller binding), then the scheme's verify, which simulates with `sigVerify: false` and so needs
 * no signature. A message that passes is admitted for VERIFIED_FOR_MS; the signer handed to the
 * scheme refuses any message not admitted (UncheckedMessageError), so no code path, present or
 * future, can sign first and check later, and no signature of an unchecked transaction can exist
 * to be stored, logged, answered or sent to the RPC.
 *
 * Least privilege: the read-only routes (verify, supported) build it with a signer that knows only
 * the fee payer's public address and can sign nothing (the reconciler builds the read-only one too:
 * it never signs). Settle holds no key either: its gated signer asks the hot-wallet signer
 * (functions/rails/hot-wallet-signer.ts) for the fee payer's signature of an admitted message,
 * handing it the payload and requirements that passed here, and the signer verifies them again
 * before it signs (functions/signer/sign.ts). Import this only from x402 functions: it carries @solana/kit.
 *
 * The gate is verified-gate.ts; what is read of a payment's transaction (its hash, the refusals the
 * scheme does not make, its fee) is payment-transaction.ts.
 */

import { address, createSolanaRpc, getSignatureFromTransaction, type Signature } from '@solana/kit';
import { x402Facilitator } from '@x402/core/facilitator';
import type { Network, PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from '@x402/core/types';
import { PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { decodeTransactionFromPayload, getTokenPayerFromTransaction, toFacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/facilitator';
import bs58 from 'bs58';
import { config, onConfigReset } from '../config';
import { X402UnavailableError } from '../core/x402';
import { RailConfigError } from '../rails/errors';
import { readRailSecret } from '../rails/rail-secret';
import { transactionReader } from './payment-transaction';
import { addressOnly, gated, sha256, UncheckedMessageError, VerifiedMessages } from './verified-gate';

/** A refusal of the service's own (policy, seller binding): the reason and its message. */
export interface Refusal {
  reason: string;
  message: string;
}

/** The service's checks of one request, run first by `verify`: a refusal, or undefined when it passes. */
export type ServiceChecks = () => Refusal | undefined;

/** What the use cases need of the chain side of x402 (tests may stand in a recording double). */
export interface Facilitator {
  network: string;
  feePayer: string;
  supported(): SupportedResponse;
  /**
   * Every check of a payment: the service's (`checks`), then the stock scheme's verify (no signature
   * needed). One that passes is admitted to this facilitator's signing gate, with these requirements.
   */
  verify(payload: PaymentPayload, requirements: PaymentRequirements, checks: ServiceChecks): Promise<VerifyResponse>;
  /**
   * The stock scheme's settle (it verifies again, signs as the fee payer, sends, confirms) of a
   * payment `verify` admitted with these requirements; one that was not (a retry in another
   * container) is verified first, and a refusal is answered without anything signed.
   */
  settle(payload: PaymentPayload, requirements: PaymentRequirements, checks: ServiceChecks): Promise<SettleResponse>;
  /**
   * The signature the transaction lands under (the fee payer's: ed25519 is deterministic). Only of
   * a transaction `verify` admitted: throws UncheckedMessageError for any other.
   */
  signatureOf(payload: PaymentPayload): Promise<string>;
  /** sha256 (hex) of the transaction's message bytes, computed without any key; undefined when it cannot be decoded. */
  messageHash(payload: PaymentPayload): string | undefined;
  /** Lamports the transaction costs its fee payer when it lands (base and priority fee); undefined when it cannot be decoded. */
  feeOf(payload: PaymentPayload): number | undefined;
  /** The buyer (the transfer's authority) of the payload's transaction; "" when it has none. */
  payerOf(payload: PaymentPayload): string;
  /** The transaction's state on chain: confirmed (or finalized), failed there, or not seen. */
  chainStatus(signature: string): Promise<ChainStatus>;
  /** The fee payer's (the hot wallet's) SOL, in lamports. */
  feePayerLamports(): Promise<number>;
}

export type ChainStatus = { kind: 'confirmed'; finalized: boolean } | { kind: 'failed'; error: string } | { kind: 'unknown' };

let readOnly: Promise<Facilitator> | undefined;
let signing: Promise<Facilitator> | undefined;
onConfigReset(() => {
  readOnly = undefined;
  signing = undefined;
});

/** The facilitator for verify, supported and the reconciler: the fee payer's address only. */
export function readOnlyFacilitator(): Promise<Facilitator> {
  readOnly ??= build(false).catch((error: unknown) => {
    readOnly = undefined;
    throw error;
  });
  return readOnly;
}

/** The facilitator for settle: signs as the fee payer through the hot-wallet signer, behind the verified-message gate. */
export function signingFacilitator(): Promise<Facilitator> {
  signing ??= build(true).catch((error: unknown) => {
    signing = undefined;
    throw error;
  });
  return signing;
}

async function build(signing: boolean): Promise<Facilitator> {
  const cfg = config();
  const feePayer = cfg.SOLANA_HOT_WALLET_ADDRESS;
  // Not set on a fresh deployment until the operator has made the hot wallet (docs/operating/stages.md, "Secrets").
  if (!feePayer || !cfg.X402_PAY_TO) throw new X402UnavailableError();
  const rpcUrl = cfg.SOLANA_RPC_URL ?? (await secretUrl());
  const gate = new VerifiedMessages();
  const signer = signing ? gated(address(feePayer), gate) : addressOnly(address(feePayer));
  const svmSigner = toFacilitatorSvmSigner(signer, { defaultRpcUrl: rpcUrl });
  const network = cfg.X402_NETWORK as Network;
  const scheme = new ExactSvmScheme(svmSigner, undefined, {
    maxComputeUnits: cfg.X402_MAX_COMPUTE_UNITS,
    maxPriorityFeeMicroLamports: cfg.X402_MAX_PRIORITY_FEE_MICROLAMPORTS,
    maxRequiredSignatures: cfg.X402_MAX_SIGNATURES,
  });
  // Listed in `/x402/supported`; the identifiers themselves are kept by the use cases (use-cases/x402-facilitator/x402-policy.ts).
  const facilitator = new x402Facilitator().register(network, scheme).registerExtension({ key: PAYMENT_IDENTIFIER });
  const reader = transactionReader();
  const { decoder, base64, messageHash, versionRefusal, feePayerRefusal } = reader;
  const fingerprint = (requirements: PaymentRequirements) => sha256(JSON.stringify(requirements));

  const verify: Facilitator['verify'] = async (payload, requirements, checks) => {
    const refusal = checks() ?? versionRefusal(payload) ?? feePayerRefusal(payload);
    if (refusal) return { isValid: false, invalidReason: refusal.reason, invalidMessage: refusal.message, payer: '' };
    const response = await facilitator.verify(payload, requirements);
    const message = messageHash(payload);
    if (response.isValid && message) gate.admit(message, fingerprint(requirements), { payload, requirements });
    return response;
  };

  return {
    network,
    feePayer,
    supported: () => facilitator.getSupported() as SupportedResponse,
    verify,
    async settle(payload, requirements, checks) {
      const message = messageHash(payload);
      if (!message || !gate.passed(message, fingerprint(requirements))) {
        const verdict = await verify(payload, requirements, checks);
        if (!verdict.isValid) {
          return {
            success: false,
            errorReason: verdict.invalidReason ?? 'invalid_payment',
            ...(verdict.invalidMessage ? { errorMessage: verdict.invalidMessage } : {}),
            payer: verdict.payer ?? '',
            transaction: '',
            network: requirements.network,
          };
        }
      }
      return facilitator.settle(payload, requirements);
    },
    async signatureOf(payload) {
      const transaction = (payload.payload as { transaction?: unknown }).transaction;
      if (typeof transaction !== 'string') throw new UncheckedMessageError();
      // The gated signer refuses a message `verify` did not admit: this signs only a checked transaction.
      const signed = await svmSigner.signTransaction(transaction, address(feePayer), network);
      return getSignatureFromTransaction(decoder.decode(base64.encode(signed)));
    },
    messageHash,
    feeOf: reader.feeOf,
    payerOf(payload) {
      try {
        return getTokenPayerFromTransaction(decodeTransactionFromPayload(payload.payload as { transaction: string })) ?? '';
      } catch {
        return '';
      }
    },
    ...chainReads(createSolanaRpc(rpcUrl), feePayer),
  };
}

/** What the facilitator asks the chain: a settlement's status, the fee payer's balance. No key. */
function chainReads(rpc: ReturnType<typeof createSolanaRpc>, feePayer: string): Pick<Facilitator, 'chainStatus' | 'feePayerLamports'> {
  return {
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
    async feePayerLamports() {
      const { value } = await rpc.getBalance(address(feePayer)).send();
      return Number(value);
    },
  };
}

export async function secretUrl(): Promise<string> {
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
