/**
 * Idempotency for money-moving POSTs (DESIGN §4). The record itself is written by the
 * repositories inside the money transaction; this module validates the header, fingerprints the
 * request, and answers a request whose key was already used.
 */
import { createHash } from 'node:crypto';
import { IdempotencyMismatchError, ValidationError } from '../core/errors';
import type { HttpRequest } from '../http/request';
import type { HttpResult } from '../http/response';
import { getIdempotencyRecord, type IdempotencyRecord, toRecord } from '../store/idempotency.repository';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const PRINTABLE_ASCII = /^[\x20-\x7e]{1,255}$/;

/** The Idempotency-Key header: required, 1–255 printable ASCII characters. */
export function requireIdempotencyKey(req: HttpRequest): string {
  const key = req.headers[IDEMPOTENCY_HEADER];
  if (key === undefined) throw new ValidationError('missing Idempotency-key');
  if (!PRINTABLE_ASCII.test(key)) {
    throw new ValidationError('Idempotency-Key must be 1-255 printable ASCII characters');
  }
  return key;
}

/** SHA-256 over a canonical rendering of what makes two requests "the same". */
export function fingerprint(parts: Record<string, string | number>): string {
  const canonical = JSON.stringify(
    Object.keys(parts)
      .sort()
      .map((k) => [k, parts[k]]),
  );
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * The answer for a key already used: the stored response with `Idempotent-Replayed: true` when
 * the request matches, 422 when it does not. `existing` is the old item DynamoDB handed back with
 * the failed condition; when it did not, the record is read. Undefined when no live record exists
 * after all (it expired in between): the caller may then try once more.
 */
export async function replay(
  scope: string,
  key: string,
  existing: Record<string, unknown> | undefined,
  requestFingerprint: string,
  now: Date,
): Promise<HttpResult | undefined> {
  const record: IdempotencyRecord | undefined = existing ? toRecord(existing, now) : await getIdempotencyRecord(scope, key, now);
  if (!record) return undefined;
  if (record.fingerprint !== requestFingerprint) throw new IdempotencyMismatchError();
  return { statusCode: record.statusCode, rawBody: record.body, headers: { 'idempotent-replayed': 'true' } };
}
