/**
 * How the console writes amounts and times, for every page (the framework's and the pages'):
 * amounts exact with their currency and at least two decimals ("100.00 USD"), times in the payer's
 * time zone when the browser said it (a cookie the console's script sets), else UTC, said under
 * them, and a charge's status in the same words everywhere.
 */
import type { ChargeStatus } from '../core/charges';
import type { Currency, Minor } from '../core/money';
import { html, type SafeHtml } from '../http/html';
import { displayAmount } from '../pages/approval-page.view';

export { timeLeft } from '../pages/approval-page.view';

export const money = (minor: Minor, currency: Currency): string => displayAmount(minor, currency);

/** Whether `zone` is a time zone this runtime knows (a cookie is the browser's word, checked). */
export function validTimeZone(zone: string | undefined): string | undefined {
  if (!zone || zone.length > 64 || !/^[A-Za-z0-9_+\-/]+$/.test(zone)) return undefined;
  try {
    new Intl.DateTimeFormat('en-GB', { timeZone: zone });
    return zone;
  } catch {
    return undefined;
  }
}

/** The time zone a page shows times in: the browser's when it told us one we know, else UTC. */
export const zoneOf = (session: { timeZone?: string | undefined }): string => validTimeZone(session.timeZone) ?? 'UTC';

/**
 * A time as every console page writes it: "27 Nov 2026, 10:45" in the session's zone, in a <time>
 * with the exact instant; the zone is named once under the page's times (zoneNote).
 */
export function when(iso: string | null | undefined, session: { timeZone?: string | undefined }): SafeHtml {
  if (!iso) return html`—`;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return html`${iso}`;
  const text = new Intl.DateTimeFormat('en-GB', {
    timeZone: zoneOf(session),
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  }).format(date);
  return html`<time datetime="${date.toISOString()}">${text}</time>`;
}

/**
 * The sentence under a page's times when they are not in the payer's own zone (DESIGN §26): only
 * when the browser gave none we know (no script, or a zone this runtime lacks), saying they are in
 * UTC. A browser that gave its zone sees its own times, as on any site, and no note.
 */
export function zoneNote(session: { timeZone?: string | undefined }): SafeHtml {
  if (validTimeZone(session.timeZone)) return html``;
  return html`<p class="hint">Times are shown in UTC (your browser did not tell us its time zone).</p>`;
}

/** A charge's state in a payer's words, the same on every page (Overview, Activity): "Succeeded", "Failed: <reason>". */
export function chargeStatusWords(charge: {
  status: ChargeStatus;
  pendingReason?: string | null | undefined;
  failureReason?: string | null | undefined;
}): string {
  switch (charge.status) {
    case 'PENDING':
      return charge.pendingReason === 'user_approval' ? 'Waiting for your approval' : 'Held, waiting for the agent to capture';
    case 'SUCCESS':
      return 'Succeeded';
    case 'EXPIRED':
      return 'Expired';
    case 'FAILED':
      return charge.failureReason ? `Failed: ${charge.failureReason}` : 'Failed';
  }
}
