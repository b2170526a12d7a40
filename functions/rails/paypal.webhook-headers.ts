/**
 * The cheap checks on a PayPal webhook's transmission headers, made before PayPal is asked to
 * verify its signature (docs/topups.md "USD: PayPal checkout"): no I/O, so a request that fails one
 * costs the service nothing and PayPal no call.
 * - all five headers PayPal signs with are present;
 * - `paypal-cert-url` is an https URL on PayPal's API hosts, under the path PayPal serves its
 *   webhook signing certificates from (`/v1/notifications/certs/…`), default port, no credentials;
 * - `paypal-transmission-time` is within TRANSMISSION_MAX_SKEW_MS of now (PayPal sends it when it
 *   transmits; retries are new transmissions);
 * - `paypal-transmission-id` has a sane shape (it becomes a table key for replay detection).
 */

import { type Refusal, refuse } from '../messages/refusal';
import type { WebhookTransmission } from './paypal.orders';

/** PayPal's REST API hosts, live and sandbox (the `api-m` names are PayPal's current ones). */
export const PAYPAL_CERT_HOSTS: ReadonlySet<string> = new Set([
  'api.paypal.com',
  'api-m.paypal.com',
  'api.sandbox.paypal.com',
  'api-m.sandbox.paypal.com',
]);
const CERT_PATH = '/v1/notifications/certs/';
export const TRANSMISSION_MAX_SKEW_MS = 5 * 60_000;
const TRANSMISSION_ID = /^[A-Za-z0-9-]{1,128}$/;

/** The five headers, in the order a missing one is reported. */
const HEADERS = {
  transmissionId: 'paypal-transmission-id',
  transmissionTime: 'paypal-transmission-time',
  transmissionSig: 'paypal-transmission-sig',
  certUrl: 'paypal-cert-url',
  authAlgo: 'paypal-auth-algo',
} as const satisfies Record<keyof WebhookTransmission, string>;

export type TransmissionCheck = { transmission: WebhookTransmission } | { problem: Refusal };

/** The transmission the headers describe, or the refusal saying which check it fails. */
export function checkTransmissionHeaders(headers: Readonly<Record<string, string | undefined>>, now: Date): TransmissionCheck {
  const values: Partial<WebhookTransmission> = {};
  for (const [field, name] of Object.entries(HEADERS) as [keyof WebhookTransmission, string][]) {
    const value = headers[name]?.trim();
    if (!value) return { problem: refuse('paypalHeaderMissing', name) };
    values[field] = value;
  }
  const transmission = values as WebhookTransmission;
  if (!TRANSMISSION_ID.test(transmission.transmissionId)) return { problem: refuse('paypalTransmissionIdInvalid') };
  if (!isPaypalCertUrl(transmission.certUrl)) return { problem: refuse('paypalCertUrlInvalid') };
  const sentAt = Date.parse(transmission.transmissionTime);
  if (!Number.isFinite(sentAt) || Math.abs(now.getTime() - sentAt) > TRANSMISSION_MAX_SKEW_MS) {
    return { problem: refuse('paypalTransmissionStale') };
  }
  return { transmission };
}

export function isPaypalCertUrl(raw: string): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  return (
    url.protocol === 'https:' &&
    url.port === '' &&
    url.username === '' &&
    url.password === '' &&
    PAYPAL_CERT_HOSTS.has(url.hostname) &&
    url.pathname.startsWith(CERT_PATH) &&
    url.pathname.length > CERT_PATH.length
  );
}
