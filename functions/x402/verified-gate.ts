/**
 * The verified-message gate of the x402 facilitator (facilitator.ts): the hot wallet signs only a
 * message whose bytes passed every check in this process. `verify` admits a message that passed
 * (`VerifiedMessages`) for VERIFIED_FOR_MS; the signer handed to the scheme (`gated`) refuses any
 * message not admitted (UncheckedMessageError), so no code path, present or future, can sign first
 * and check later. The read-only facilitator gets a signer that can sign nothing (`addressOnly`).
 * Apart from the facilitator because it is the one thing here that decides what the hot wallet signs.
 */
import { createHash } from 'node:crypto';
import type { Address, MessagePartialSigner, ReadonlyUint8Array, SignatureBytes, TransactionPartialSigner } from '@solana/kit';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import bs58 from 'bs58';
import { hotWalletSigner } from '../rails/hot-wallet-signer';

/** The hot wallet was asked to sign a message no verification in this process passed: a bug, never signed. */
export class UncheckedMessageError extends Error {
  constructor() {
    super('the fee payer signs only a transaction that passed every check in this process');
    this.name = 'UncheckedMessageError';
  }
}

export type KitSigner = MessagePartialSigner & TransactionPartialSigner;

/** How long a verified message may be signed: settle signs within the request that verified it. */
const VERIFIED_FOR_MS = 120_000;
/** Bound on admitted messages kept (the oldest go first): a container settles far fewer in VERIFIED_FOR_MS. */
const VERIFIED_MAX = 10_000;

export const sha256 = (bytes: ReadonlyUint8Array | string): string =>
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
export class VerifiedMessages {
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

/**
 * The fee payer behind the verified-message gate: a message `verify` admitted goes to the
 * hot-wallet signer with the payload and requirements it passed as (the signer verifies them again
 * and signs); any other is refused here, before anything leaves this function.
 */
export function gated(feePayer: Address, gate: VerifiedMessages): KitSigner {
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
export function addressOnly(feePayer: Address): KitSigner {
  const refuse = async (): Promise<never> => {
    throw new Error('this function holds no fee-payer key');
  };
  return { address: feePayer, signMessages: refuse, signTransactions: refuse } as unknown as KitSigner;
}
