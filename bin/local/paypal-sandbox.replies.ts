/**
 * The PayPal imitation's answers in PayPal's shapes (error names, `debug_id`, ids). A handler
 * returns one of these, or `undefined` to imitate a request that never gets an answer.
 */
import { randomBytes } from 'node:crypto';
import type { JsonReply } from './local-server';

export type SandboxReply = JsonReply | undefined;

export const reply = (status: number, body: unknown): JsonReply => ({ status, body });

export function internalError(): JsonReply {
  return reply(500, { name: 'INTERNAL_SERVER_ERROR', message: 'An internal server error has occurred.' });
}

export function notFound(): JsonReply {
  return reply(404, { name: 'INVALID_RESOURCE_ID', message: 'Requested resource ID was not found.', debug_id: debugId() });
}

export function routeNotFound(): JsonReply {
  return reply(404, { name: 'NOT_FOUND', message: 'The specified resource does not exist.' });
}

/** The error name PayPal's REST API schemas give each status (payments_payouts_batch_v1.json, `error_default`). */
const NAME_BY_STATUS: Record<number, string> = {
  400: 'INVALID_REQUEST',
  401: 'AUTHENTICATION_FAILURE',
  403: 'NOT_AUTHORIZED',
  404: 'RESOURCE_NOT_FOUND',
  409: 'RESOURCE_CONFLICT',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_ENTITY',
  500: 'INTERNAL_SERVER_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

/** An injected fault: the status with PayPal's generic name for it; nothing was done. */
export function injectedFault(status: number): JsonReply {
  const name = NAME_BY_STATUS[status] ?? (status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'UNKNOWN_ERROR');
  return reply(status, { name, message: 'Injected fault.', debug_id: debugId(), links: [] });
}

export function validationError(details: { field: string; issue: string }[]): JsonReply {
  return reply(400, {
    name: 'VALIDATION_ERROR',
    message: 'Invalid request - see details',
    debug_id: debugId(),
    information_link: 'https://developer.paypal.com/docs/api/payments.payouts-batch/#errors',
    details: details.map((d) => ({ ...d, location: 'body' })),
    links: [],
  });
}

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ0123456789';

/** PayPal-style id: upper-case letters and digits. */
export function paypalId(length = 13): string {
  return [...randomBytes(length)].map((b) => ALPHABET[b % ALPHABET.length]).join('');
}

export function debugId(): string {
  return randomBytes(7).toString('hex').slice(0, 13);
}
