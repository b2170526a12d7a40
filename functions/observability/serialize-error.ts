/**
 * The one way an error goes into a log line: name, message, code, stack and, recursively, its
 * `cause`, so a rail's root cause (a socket reset under a PayPal timeout, a blockhash error under a
 * Solana send) stays in the log instead of only the outermost wrapper.
 *
 * Only those fields are copied. An SDK or HTTP error's other properties can hold a request, its
 * headers or a response body, so they are never walked. Messages and stacks pass through
 * `redactSecrets`, which blanks the service's own key formats and any configured secret value.
 */
import { tryConfig } from '../config';

export interface SerializedError {
  name: string;
  message: string;
  /** Node system errors (`ECONNRESET`) and SDK errors carry one. */
  code?: string;
  stack?: string;
  /** The next error of the chain, or a note when the chain goes on past what is kept. */
  cause?: SerializedError | string;
  /** An AggregateError's errors. */
  errors?: (SerializedError | string)[];
}

/** Causes kept below the logged error; a longer chain ends in a note. */
const MAX_DEPTH = 8;
const REDACTED = '[redacted]';

/** Agent and user keys (functions/core/keys.ts), generated local admin keys, HTTP credentials, and a
 * secret key written as a JSON byte array (a Solana keypair is 64 numbers). */
const SECRET_PATTERNS: readonly [RegExp, string][] = [
  [/\b(ag_live_|uk_live_|adm_)[A-Za-z0-9_-]+/g, `$1${REDACTED}`],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${REDACTED}`],
  [/\[\s*(?:\d{1,3}\s*,\s*){31,}\d{1,3}\s*\]/g, REDACTED],
];

/** Blanks anything in `text` that looks like one of the service's secrets. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  const cfg = tryConfig();
  for (const secret of [cfg?.ADMIN_KEY, cfg?.PAYPAL_CLIENT_SECRET, cfg?.SOLANA_HOT_WALLET_SECRET]) {
    if (secret && secret.length >= 8) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** An error (or anything thrown) as a plain object for a log line, its `cause` chain included. */
export function serializeError(error: unknown): SerializedError | string {
  return serialize(error, 0, new Set());
}

function serialize(value: unknown, depth: number, seen: Set<unknown>): SerializedError | string {
  if (!(value instanceof Error)) return redactSecrets(describeThrown(value));
  if (seen.has(value)) return '[circular cause]';
  seen.add(value);
  const out: SerializedError = { name: value.name, message: redactSecrets(value.message) };
  const code = (value as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') out.code = String(code);
  if (value.stack) out.stack = redactSecrets(value.stack);
  if (value instanceof AggregateError && Array.isArray(value.errors)) {
    out.errors = value.errors.slice(0, MAX_DEPTH).map((e) => (depth < MAX_DEPTH ? serialize(e, depth + 1, seen) : '[more errors]'));
  }
  if (value.cause !== undefined) {
    out.cause = depth < MAX_DEPTH ? serialize(value.cause, depth + 1, seen) : `[${MAX_DEPTH} causes shown; more omitted]`;
  }
  return out;
}

/** Something thrown that is not an Error: its text for primitives, its kind otherwise (an object's
 * properties are not copied: they may be a request or a response). */
function describeThrown(value: unknown): string {
  if (value === null || typeof value !== 'object') return String(value);
  const message = (value as { message?: unknown }).message;
  return typeof message === 'string' ? `non-Error object: ${message}` : 'non-Error object';
}
