/**
 * One HTTP POST of a signed event to a receiver, safely (docs/webhooks.md "Safety"):
 * - the host is resolved at send time and EVERY address it resolves to must be allowed
 *   (core/webhooks.ts isAllowedAddress); the connection goes to the address that was checked
 *   (node's `lookup` hook), so a DNS answer that changes between check and connect (rebinding)
 *   cannot reach an internal address;
 * - redirects are never followed (a 3xx is a failed attempt);
 * - at most MAX_RESPONSE_BYTES of the answer are read, then the socket is dropped;
 * - the whole exchange is bounded by the timeout (5 s by default: a send holds a worker every tenant shares).
 * The outcome is data, never an exception: the delivery worker decides what it means.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { type AddressPolicy, bareHost, isAllowedAddress, MAX_ERROR_CHARS, MAX_RESPONSE_BYTES } from '../core/webhooks';
import { DELIVERY_ERRORS } from '../messages/problems';

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  policy: AddressPolicy;
}

export interface SendOutcome {
  ok: boolean;
  statusCode?: number;
  /** Why it failed (never the receiver's body beyond a short excerpt). */
  error?: string;
  durationMs: number;
}

/** Refused before any connection: the URL's host resolved to an address that is not allowed. */
export class AddressNotAllowedError extends Error {
  constructor(host: string) {
    super(DELIVERY_ERRORS.resolvesToNotAllowed(host));
    this.name = 'AddressNotAllowedError';
  }
}

/** A `lookup` for node's http(s) that fails unless every resolved address is allowed. */
export function safeLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 4);
      if (addresses.length === 0 || !addresses.every((a) => isAllowedAddress(a.address, policy))) {
        return callback(new AddressNotAllowedError(hostname), '', 4);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

/** POSTs `body` to `url`; resolves with the outcome, never rejects. */
export function sendWebhook(req: SendRequest): Promise<SendOutcome> {
  const started = Date.now();
  const done = (outcome: Omit<SendOutcome, 'durationMs'>): SendOutcome => ({ ...outcome, durationMs: Date.now() - started });
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return Promise.resolve(done({ ok: false, error: DELIVERY_ERRORS.invalidUrl }));
  }
  const host = bareHost(url);
  // An IP literal is never looked up: check it here.
  if (isIP(host) !== 0 && !isAllowedAddress(host, req.policy)) {
    return Promise.resolve(done({ ok: false, error: DELIVERY_ERRORS.addressNotAllowed(host) }));
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return Promise.resolve(done({ ok: false, error: DELIVERY_ERRORS.unsupportedScheme }));

  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<SendOutcome, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(outcome));
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(
      url,
      {
        method: 'POST',
        headers: { ...req.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(req.body) },
        lookup: safeLookup(req.policy),
        // A fresh connection per attempt: a pooled socket would skip the address check.
        agent: false,
      },
      (response: IncomingMessage) => {
        const statusCode = response.statusCode ?? 0;
        let read = 0;
        const chunks: Buffer[] = [];
        const settle = () => {
          const excerpt = Buffer.concat(chunks).toString('utf8').slice(0, MAX_ERROR_CHARS);
          if (statusCode >= 200 && statusCode < 300) return finish({ ok: true, statusCode });
          const reason =
            statusCode >= 300 && statusCode < 400 ? DELIVERY_ERRORS.redirect(statusCode) : DELIVERY_ERRORS.answered(statusCode);
          finish({ ok: false, statusCode, error: excerpt ? `${reason}: ${excerpt}` : reason });
        };
        response.on('data', (chunk: Buffer) => {
          if (read < MAX_RESPONSE_BYTES) chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - read));
          read += chunk.length;
          // Enough: the answer's status is known; the rest is never read.
          if (read >= MAX_RESPONSE_BYTES) {
            settle();
            response.destroy();
          }
        });
        response.on('end', settle);
        response.on('error', () => settle());
        response.on('close', settle);
      },
    );
    const timer = setTimeout(() => {
      finish({ ok: false, error: DELIVERY_ERRORS.timedOut(req.timeoutMs) });
      request.destroy();
    }, req.timeoutMs);
    request.on('error', (error) => finish({ ok: false, error: describe(error) }));
    request.end(req.body);
  });
}

function describe(error: Error): string {
  if (error instanceof AddressNotAllowedError) return error.message;
  const code = (error as { code?: string }).code;
  return (code ? `${code}: ${error.message}` : error.message).slice(0, MAX_ERROR_CHARS);
}
