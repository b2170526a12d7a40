/**
 * What the facilitator (facilitator.ts) reads of a payment's Solana transaction before the stock
 * scheme sees it: the transaction decoded from the payload, its message's hash (what the
 * verified-message gate admits, verified-gate.ts), the refusals the scheme does not make (a
 * message version whose fee rule differs, the fee payer named by an instruction), and what it
 * costs the fee payer. Pure: no key, no RPC.
 */
import {
  type CompiledTransactionMessage,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Transaction,
} from '@solana/kit';
import type { PaymentPayload } from '@x402/core/types';
import { FACILITATOR_REFUSALS } from '../messages/problems';
import { sha256 } from './verified-gate';

/** Solana's base fee, per signature the transaction carries (the fee payer pays every one). */
const LAMPORTS_PER_SIGNATURE = 5_000n;
const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';

/** A refusal of the transaction's own: the x402 reason and its message (facilitator.ts `Refusal`). */
type TransactionRefusal = { reason: string; message: string } | undefined;

/** The readers of a payment's transaction, with one set of decoders. */
export function transactionReader() {
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
  // The fee rule the caps and `feeOf` rely on is that of legacy and v0 messages (what the stock client
  // builds); a v1 message sets its compute budget elsewhere. Any other version is refused here, whatever
  // the decoder knows (@solana/kit 5, which @x402/svm's program clients are built for, cannot decode v1
  // at all); one that cannot be decoded is the scheme's to refuse.
  const versionRefusal = (payload: PaymentPayload): TransactionRefusal => {
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
  const feePayerRefusal = (payload: PaymentPayload): TransactionRefusal => {
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

  /** What the payload's transaction costs its fee payer, lamports; undefined when it cannot be read. */
  const feeOfPayload = (payload: PaymentPayload): number | undefined => {
    const transaction = decode(payload);
    if (!transaction) return undefined;
    try {
      const fee = feeOf(compiledDecoder.decode(transaction.messageBytes));
      return fee === undefined ? undefined : Number(fee);
    } catch {
      return undefined;
    }
  };
  return { decoder, base64, decode, messageHash, versionRefusal, feePayerRefusal, feeOf: feeOfPayload };
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
