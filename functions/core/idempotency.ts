/** Idempotency records: the stored answer to a money-moving request (see docs/idempotency.md). */

export interface IdempotencyRecord {
  /** SHA-256 of the canonical request (amount in minor units, currency, … and the user for charges). */
  fingerprint: string;
  statusCode: number;
  /** The exact response body sent the first time. */
  body: string;
}

/** A record to write in the same transaction as the money movement it answers for. */
export interface IdempotencyWrite {
  /** Who and which endpoint the key belongs to, e.g. `<agentId>#charges`. */
  scope: string;
  key: string;
  record: IdempotencyRecord;
}

/**
 * What a sealed answer is bound to (store/answer-seal.ts): the record's scope, the Idempotency-Key
 * as the client sent it (never stored: the table keeps its hash) and the request's fingerprint. A
 * sealed answer opens only for the same three, so not even the table together with the sealing key
 * opens it without the request that made it.
 */
export interface SealContext {
  scope: string;
  key: string;
  fingerprint: string;
}

/**
 * Seals the stored answer of a command whose answer holds a secret shown once (an agent's or a
 * payer's key, a grant key, a webhook signing secret), and opens it for a replay. Handed to the
 * command by its use case (use-cases/idempotency.ts `IdempotentCommand.seal`), so that only the
 * functions that store such answers carry the KMS client.
 */
export interface AnswerSeal {
  /** A sealer for one attempt's answer, valid until `expiresAt` (epoch seconds: the record's TTL). */
  sealer(context: SealContext, expiresAt: number): Promise<(plaintext: string) => string>;
  /** The answer a sealer sealed; undefined once `now` is past its expiry (the secret is gone). Throws for another context. */
  open(sealed: string, context: SealContext, now: Date): Promise<string | undefined>;
}

/**
 * The encryption context's `purpose` of sealed answers (store/answer-seal.ts; beside `service:
 * agent-payment-service`): the sealing routes' KMS grant is pinned to it (lib/grants.ts).
 */
export const ANSWER_SEAL_PURPOSE = 'idempotent-answer';
