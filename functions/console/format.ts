/**
 * How the console writes amounts and times, for every page (the framework's and the pages'):
 * amounts exact with their currency and at least two decimals ("100.00 USD"), times in the payer's
 * time zone when the browser said it (a cookie the passkey script sets), else UTC, named.
 */
import type { Currency, Minor } from '../core/money';
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

/** `2026-11-27 11:05` in the payer's zone, with the zone's short name ("CET", "UTC"). */
export function formatTime(iso: string, timeZone: string | undefined): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: timeZone ?? 'UTC',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  }).formatToParts(date);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')} ${part('timeZoneName')}`;
}
