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
 */

import { createHash } from 'node:crypto';
import {
  type Address,
  address,
  type CompiledTransactionMessage,
  createSolanaRpc,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  type MessagePartialSigner,
  type ReadonlyUint8Array,
  type Signature,
  type SignatureBytes,
  type Transaction,
  type TransactionPartialSigner,
} from '@solana/kit';
import { x402Facilitator } from '@x402/core/facilitator';
import type { Network, PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from '@x402/core/types';
import { PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import { decodeTransactionFromPayload, getTokenPayerFromTransaction, toFacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/facilitator';
import bs58 from 'bs58';
import { config, onConfigReset } from '../config';
import { X402UnavailableError } from '../core/x402';
import { FACILITATOR_REFUSALS } from '../messages/catalogue';
import { RailConfigError } from '../rails/errors';
import { hotWalletSigner } from '../rails/hot-wallet-signer';
import { readRailSecret } from '../rails/rail-secret';

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

/** The hot wallet was asked to sign a message no verification in this process passed: a bug, never signed. */
export class UncheckedMessageError extends Error {
  constructor() {
    super('the fee payer signs only a transaction that passed every check in this process');
    this.name = 'UncheckedMessageError';
  }
}

type KitSigner = MessagePartialSigner & TransactionPartialSigner;

/** Solana's base fee, per signature the transaction carries (the fee payer pays every one). */
const LAMPORTS_PER_SIGNATURE = 5_000n;
const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
/** How long a verified message may be signed: settle signs within the request that verified it. */
const VERIFIED_FOR_MS = 120_000;
/** Bound on admitted messages kept (the oldest go first): a container settles far fewer in VERIFIED_FOR_MS. */
const VERIFIED_MAX = 10_000;

const sha256 = (bytes: ReadonlyUint8Array | string): string =>
  createHash('sha256')
    .update(typeof bytes === 'string' ? bytes : Buffer.from(bytes))
    .digest('hex');

/** A message that passed every check here: what it passed as, and the fee payer's signature once the signer gave it. */
interface Admitted {
  /** sha256 of the requirements' JSON. */
  requirements: string;
  until: number;
  /** The payload and requirements that passed: what the signer is handed, to verify again. */
  passed: { payload: PaymentPayload; requirements: PaymentRequirements };
  /** The signer's answer (ed25519 is deterministic: one per message), asked once. */
  signature?: Promise<string>;
}

/** Messages (sha256 of their bytes) that passed every check here, with the requirements they passed against, until when. */
class VerifiedMessages {
  private readonly entries = new Map<string, Admitted>();

  admit(message: string, requirements: string, passed: Admitted['passed']): void {
    const now = Date.now();
    this.prune(now);
    this.entries.delete(message);
    this.entries.set(message, { requirements, until: now + VERIFIED_FOR_MS, passed });
    if (this.entries.size > VERIFIED_MAX) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  /** Admitted and still fresh; with `requirements`, admitted against exactly those. */
  passed(message: string, requirements?: string): boolean {
    const entry = this.admitted(message);
    return entry !== undefined && (requirements === undefined || entry.requirements === requirements);
  }

  /** The admission of a message, while it is fresh. */
  admitted(message: string): Admitted | undefined {
    const entry = this.entries.get(message);
    return entry && entry.until > Date.now() ? entry : undefined;
  }

  /** Entries are in admission order and all live VERIFIED_FOR_MS: the stale ones are at the front. */
  private prune(now: number): void {
    for (const [message, entry] of this.entries) {
      if (entry.until > now) break;
      this.entries.delete(message);
    }
  }
}

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
  // Listed in `/x402/supported`; the identifiers themselves are kept by the use cases (use-cases/x402.ts).
  const facilitator = new x402Facilitator().register(network, scheme).registerExtension({ key: PAYMENT_IDENTIFIER });
  const rpc = createSolanaRpc(rpcUrl);
  const decoder = getTransactionDecoder();
  const compiledDecoder = getCompiledTransactionMessageDecoder();
  const base64 = getBase64Encoder();
  const decode = (payload: PaymentPayload): Transaction | undefined => {
    const transaction = (payload.payload as { transaction?: unknown }).transaction;
    if (typeof transaction !== 'string') return undefined;
    try {
      return decoder.decode(base64.encode(transaction));
    } catch {
      return undefined;
    }
  };
  const messageHash = (payload: PaymentPayload): string | undefined => {
    const transaction = decode(payload);
    return transaction ? sha256(transaction.messageBytes) : undefined;
  };
  const fingerprint = (requirements: PaymentRequirements) => sha256(JSON.stringify(requirements));
  // The fee rule the caps and `feeOf` rely on is that of legacy and v0 messages (what the stock client
  // builds); a v1 message sets its compute budget elsewhere. Any other version is refused here, whatever
  // the decoder knows (@solana/kit 5, which @x402/svm's program clients are built for, cannot decode v1
  // at all); one that cannot be decoded is the scheme's to refuse.
  const versionRefusal = (payload: PaymentPayload): Refusal | undefined => {
    const transaction = decode(payload);
    if (!transaction) return undefined;
    try {
      const { version } = compiledDecoder.decode(transaction.messageBytes);
      if (version !== 'legacy' && version !== 0) {
        return { reason: 'invalid_exact_svm_payload_transaction_version', message: FACILITATOR_REFUSALS.transactionVersion };
      }
    } catch {
      return undefined;
    }
    return undefined;
  };

  // The fee payer's signature covers every instruction, and the stock layout lets Lighthouse and memo
  // instructions after the transfer run with any accounts: Lighthouse's MemoryWrite funds an account
  // from its payer. So the fee payer (always the first account) may be no instruction's account or
  // program, as the stock scheme requires of a smart wallet's transaction; the stock client's never is.
  const feePayerRefusal = (payload: PaymentPayload): Refusal | undefined => {
    const transaction = decode(payload);
    if (!transaction) return undefined;
    let message: CompiledTransactionMessage;
    try {
      message = compiledDecoder.decode(transaction.messageBytes);
    } catch {
      return undefined;
    }
    if (!('instructions' in message)) return undefined;
    const named = message.instructions.some((i) => i.programAddressIndex === 0 || (i.accountIndices ?? []).includes(0));
    return named
      ? { reason: 'invalid_exact_svm_payload_fee_payer_in_instruction', message: FACILITATOR_REFUSALS.feePayerInInstruction }
      : undefined;
  };

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
    feeOf(payload) {
      const transaction = decode(payload);
      if (!transaction) return undefined;
      try {
        const fee = feeOf(compiledDecoder.decode(transaction.messageBytes));
        return fee === undefined ? undefined : Number(fee);
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
    async feePayerLamports() {
      const { value } = await rpc.getBalance(address(feePayer)).send();
      return Number(value);
    },
  };
}

/**
 * What a transaction costs its fee payer when it lands, by Solana's fee rule: the base fee per
 * signature, and the priority fee its compute budget asks for (ceil(unit limit × unit price / 10^6)
 * lamports, charged on the limit whatever is consumed). The `exact` layout always carries both
 * compute budget instructions; without a price the priority fee is 0.
 */
function feeOf(message: CompiledTransactionMessage): bigint | undefined {
  // A v1 message sets its compute budget outside its instructions: verify refuses it (below).
  if (!('instructions' in message)) return undefined;
  let units = 0n;
  let microLamports = 0n;
  for (const instruction of message.instructions) {
    if (message.staticAccounts[instruction.programAddressIndex] !== COMPUTE_BUDGET_PROGRAM || !instruction.data) continue;
    const data = Buffer.from(instruction.data);
    if (data[0] === 2 && data.length >= 5) units = BigInt(data.readUInt32LE(1));
    if (data[0] === 3 && data.length >= 9) microLamports = data.readBigUInt64LE(1);
  }
  const priority = (units * microLamports + 999_999n) / 1_000_000n;
  return LAMPORTS_PER_SIGNATURE * BigInt(message.header.numSignerAccounts) + priority;
}

/**
 * The fee payer behind the verified-message gate: a message `verify` admitted goes to the
 * hot-wallet signer with the payload and requirements it passed as (the signer verifies them again
 * and signs); any other is refused here, before anything leaves this function.
 */
function gated(feePayer: Address, gate: VerifiedMessages): KitSigner {
  const signatureOf = async (messageBytes: ReadonlyUint8Array) => {
    const entry = gate.admitted(sha256(messageBytes));
    if (!entry) throw new UncheckedMessageError();
    entry.signature ??= hotWalletSigner()
      .sign({ kind: 'x402-settlement', ...entry.passed })
      .catch((error: unknown) => {
        entry.signature = undefined;
        throw error;
      });
    return { [feePayer]: bs58.decode(await entry.signature) } as Record<Address, SignatureBytes>;
  };
  return {
    address: feePayer,
    async signMessages(messages) {
      if (!messages.every((m) => gate.passed(sha256(m.content)))) throw new UncheckedMessageError();
      return Promise.all(messages.map((m) => signatureOf(m.content)));
    },
    async signTransactions(transactions) {
      if (!transactions.every((t) => gate.passed(sha256(t.messageBytes)))) throw new UncheckedMessageError();
      return Promise.all(transactions.map((t) => signatureOf(t.messageBytes)));
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
