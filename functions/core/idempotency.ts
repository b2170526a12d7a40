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
