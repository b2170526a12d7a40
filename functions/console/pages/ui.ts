/**
 * What the console's money and settings pages share: amounts and times as a person reads them,
 * the hidden fields every form carries, form values read into the API's own request shapes (so the
 * console validates exactly as the API does), and refusals shown as the page again.
 */
import { LosslessNumber } from 'lossless-json';
import { renderRefusal } from '../../contracts/outcome';
import { describeProblems, type Wording } from '../../contracts/validation';
import { newRecordId } from '../../core/ids';
import type { Currency } from '../../core/money';
import { html, type SafeHtml } from '../../http/html';
import { isRefusal, refuse } from '../../messages/refusal';
import type { ConsoleNavName, ConsoleResult, ConsoleSession } from '../page';

/**
 * An amount as people read it: at least two decimals and its currency ("100.00 USD"). USDC has six
 * decimal places; a USDC amount finer than a cent keeps its digits (money is never rounded for show).
 */
export function money(amount: { toString(): string } | string | number, currency: Currency | string): string {
  const text = String(amount);
  const negative = text.startsWith('-');
  const [whole = '0', frac = ''] = (negative ? text.slice(1) : text).split('.');
  return `${negative ? '-' : ''}${whole}.${frac.padEnd(2, '0')} ${currency}`;
}

/** The same without the currency, for a CSV's amount column. */
export function plainAmount(amount: { toString(): string } | string): string {
  return money(amount, '').trimEnd();
}

// Times and their zone are written as on every console page (the framework's too): one formatter.
export { when, zoneNote, zoneOf } from '../format';

/** The session's CSRF token: every form carries it. */
export function csrfField(session: ConsoleSession): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${session.csrfToken}">`;
}

/** The name of the one-time idempotency key of a form that moves money or makes a secret. */
export const ONCE_FIELD = 'idempotencyKey';

/** A fresh one-time key, rendered with the form: a double submit sends the same one and acts once. */
export function onceField(): SafeHtml {
  return html`<input type="hidden" name="${ONCE_FIELD}" value="${newRecordId()}">`;
}

/** A refusal or a problem, announced to screen readers when the page loads. */
export function errorBox(message: string | undefined): SafeHtml {
  if (!message) return html``;
  return html`<div class="error" role="alert"><p><strong>That did not work:</strong> ${message}</p></div>`;
}

/**
 * A wide table in its own region. On a phone (http/style.ts) each row is a card, each cell on its
 * own line after its column's name, so nothing scrolls sideways: every cell carries its column's
 * name in `data-label`. From 48rem it is the table, which scrolls inside this region if it must.
 */
export function tableRegion(label: string, table: SafeHtml): SafeHtml {
  return html`<div class="table-wrap stack" role="region" aria-label="${label}" tabindex="0">${table}</div>`;
}

/** A form text as a JSON number literal the API's schemas read (never a float in between); undefined when empty. */
export function amountField(form: Readonly<Record<string, string>>, name: string, label: string): LosslessNumber | undefined {
  const text = (form[name] ?? '').trim();
  if (text === '') return undefined;
  // People write "1,000.50" or "$5": say what is expected rather than guess.
  if (!/^\d+(\.\d+)?$/.test(text)) throw refuse('consoleAmountInvalid', label);
  return new LosslessNumber(text);
}

/** A whole number from a form field; undefined when empty. */
export function wholeField(form: Readonly<Record<string, string>>, name: string, label: string): number | undefined {
  const text = (form[name] ?? '').trim();
  if (text === '') return undefined;
  if (!/^\d{1,9}$/.test(text)) throw refuse('consoleWholeNumberInvalid', label);
  return Number(text);
}

/**
 * The public message and status of a refusal a use case threw (an ApiError's message is public by
 * construction, a 503 "payment provider unavailable, retry later" included); anything else is a
 * bug and propagates to the framework's 500. A refusal about the request's fields is worded from
 * its problems, with the page's labels for the API's field paths ("Per charge" for
 * `limits.perCharge`) and its units for bounds (`wording.bound`); the text is never read.
 */
export function refusal(
  error: unknown,
  labels: Readonly<Record<string, string>> = {},
  bound?: Wording['bound'],
): { status: number; message: string } {
  if (!isRefusal(error)) throw error;
  const { status, text } = renderRefusal(error);
  const { problems } = error;
  if (problems.length === 0) return { status, message: text };
  return {
    status,
    message: describeProblems(problems, { label: (field) => (Object.hasOwn(labels, field) ? labels[field] : undefined), bound }),
  };
}

/** A page answer. */
export function page(title: string, nav: ConsoleNavName, body: SafeHtml, status = 200): ConsoleResult {
  return { kind: 'page', title, nav, body, status };
}

/** 404 as a page: an unknown id, or another payer's (which is the same thing to this payer). */
export function notFound(nav: ConsoleNavName, what: string, back: { href: string; label: string }): ConsoleResult {
  return page(
    `${what} not found`,
    nav,
    html`<p>There is no ${what.toLowerCase()} with this id in your account.</p><p><a href="${back.href}">${back.label}</a></p>`,
    404,
  );
}
