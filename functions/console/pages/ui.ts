/**
 * What the console's money and settings pages share: amounts and times as a person reads them,
 * the hidden fields every form carries, form values read into the API's own request shapes (so the
 * console validates exactly as the API does), and refusals shown as the page again.
 */
import { LosslessNumber } from 'lossless-json';
import { renderRefusal } from '../../contracts/outcome';
import { describeProblem, describeProblems, type Wording } from '../../contracts/validation';
import { newRecordId } from '../../core/ids';
import type { Currency } from '../../core/money';
import { html, type SafeHtml } from '../../http/html';
import { isRefusal, type Refusal, refuse } from '../../messages/refusal';
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

/**
 * Every problem of a form at once (DESIGN §26), each beside its field. A page reads its fields
 * through a `FormCheck` (a malformed amount or whole number is noted, not thrown, and left out of
 * the request, so the API's schema still judges every other field), then hands what the use case
 * refused to `check.refused(error)`: each of the refusal's problems (all of zod's issues, not the
 * first) goes to the field its API path names (`fields`: API path → form field; a path not listed
 * is the form field of the same name), worded with the page's labels and units; a problem about
 * no field of the form goes to the summary. `formField` renders a field with its problem
 * (`aria-invalid`, `aria-describedby` to the message) and the value typed; `problemSummary` lists
 * them all at the top, each linked to its field.
 */
export interface FormProblems {
  status: number;
  /** Problems by form field name. */
  fields: Readonly<Record<string, string>>;
  /** Problems about no field of the form (a 503, a replayed key with other values). */
  general: readonly string[];
}

export class FormCheck {
  readonly #fields: Record<string, string> = {};

  constructor(
    private readonly form: Readonly<Record<string, string>>,
    private readonly wording: {
      labels?: Readonly<Record<string, string>>;
      fields?: Readonly<Record<string, string>>;
      bound?: Wording['bound'];
    } = {},
  ) {}

  /** A form's amount as the API reads it; a malformed one is noted and undefined. */
  amount(name: string, label: string): LosslessNumber | undefined {
    return this.#read(() => amountField(this.form, name, label), name);
  }

  /** A form's whole number; a malformed one is noted and undefined. */
  whole(name: string, label: string): number | undefined {
    return this.#read(() => wholeField(this.form, name, label), name);
  }

  /** Notes a problem of one field (the first one noted for a field is kept). */
  note(name: string, message: string): void {
    this.#fields[name] ??= message;
  }

  /** Whether this field has a problem. */
  has(name: string): boolean {
    return Object.hasOwn(this.#fields, name);
  }

  /** Whether any field has a problem. */
  get failed(): boolean {
    return Object.keys(this.#fields).length > 0;
  }

  /** Refuses (throws) when a field has a problem: call before acting, after the schema had its say. */
  orRefuse(): void {
    if (this.failed) throw new FormRefused();
  }

  /**
   * Notes the field problems of a refusal (when it is one) and says whether it was: for a second
   * check whose problems a first one hid (zod runs a transform only once the object parsed).
   */
  absorb(error: unknown): boolean {
    if (!isRefusal(error)) return false;
    for (const { name, message } of this.#worded(error)) if (Object.hasOwn(this.form, name)) this.note(name, message);
    return true;
  }

  /** Every problem: those noted, and those of `error` (a refusal; anything else propagates). */
  refused(error: unknown): FormProblems {
    const failedBefore = this.failed;
    if (error instanceof FormRefused) return { status: 400, fields: { ...this.#fields }, general: [] };
    if (!isRefusal(error)) throw error;
    const { status, text } = renderRefusal(error);
    const general: string[] = [];
    const fields = { ...this.#fields };
    for (const { name, message } of this.#worded(error)) {
      if (Object.hasOwn(this.form, name)) fields[name] ??= message;
      else general.push(message);
    }
    if (error.problems.length === 0) general.push(text);
    return { status: failedBefore ? 400 : status, fields, general };
  }

  /** A refusal's problems, each with the form field it names and the page's words for it. */
  #worded(error: Refusal): { name: string; message: string }[] {
    const labels = this.wording.labels ?? {};
    return error.problems.map((problem) => ({
      name: this.wording.fields?.[problem.field] ?? problem.field,
      message: describeProblem(problem, {
        label: (field) => (Object.hasOwn(labels, field) ? labels[field] : undefined),
        bound: this.wording.bound,
      }),
    }));
  }

  #read<T>(read: () => T | undefined, name: string): T | undefined {
    try {
      return read();
    } catch (error) {
      if (!isRefusal(error)) throw error;
      this.note(name, renderRefusal(error).text);
      return undefined;
    }
  }
}

/** Thrown by `FormCheck.orRefuse`: the form's own problems, already noted. */
class FormRefused extends Error {
  constructor() {
    super('the form has problems');
    this.name = 'FormRefused';
  }
}

/** One form field: its label, hint, problem and the value typed. `id` must be unique on the page. */
export interface FieldSpec {
  id: string;
  name: string;
  label: string;
  hint?: string | SafeHtml;
  value?: string;
  problem?: string | undefined;
  /** `input` (default) or `select` with its options. */
  options?: readonly { value: string; label: string }[];
  /** A `textarea` of this many rows instead of an input (one entry a line). */
  rows?: number;
  type?: string;
  /** More attributes of the control (`inputmode`, `autocomplete`, `list`…). */
  attrs?: SafeHtml;
  /** A unit shown after the input (`USD`). */
  unit?: string;
}

/** A field with its problem beside it: `aria-invalid="true"` and `aria-describedby` naming the message, then the hint. */
export function formField(f: FieldSpec): SafeHtml {
  const describedBy = [f.problem ? `${f.id}-error` : '', f.hint ? `${f.id}-hint` : ''].filter(Boolean).join(' ');
  const aria = html`${describedBy ? html` aria-describedby="${describedBy}"` : html``}${f.problem ? html` aria-invalid="true"` : html``}`;
  const control = f.options
    ? html`<select id="${f.id}" name="${f.name}"${aria}${f.attrs ?? html``}>${f.options.map(
        (o) => html`<option value="${o.value}"${o.value === (f.value ?? '') ? html` selected` : html``}>${o.label}</option>`,
      )}</select>`
    : f.rows
      ? html`<textarea id="${f.id}" name="${f.name}" rows="${f.rows}"${f.attrs ? html` ${f.attrs}` : html``}${aria}>${f.value ?? ''}</textarea>`
      : html`<input id="${f.id}" name="${f.name}" type="${f.type ?? 'text'}"${f.attrs ? html` ${f.attrs}` : html``} value="${f.value ?? ''}"${aria}>`;
  return html`<div class="field${f.problem ? ' invalid' : ''}">
<label for="${f.id}">${f.label}</label>
${f.problem ? html`<p class="field-error" id="${f.id}-error"><span class="visually-hidden">Error: </span>${f.problem}</p>` : html``}
${f.unit ? html`<div class="with-unit">${control}<span class="unit" aria-hidden="true">${f.unit}</span></div>` : control}
${f.hint ? html`<p class="hint" id="${f.id}-hint">${f.hint}</p>` : html``}
</div>`;
}

/**
 * Every problem at the top of the form, announced when the page loads, each linked to its field
 * (`ids`: form field name → the control's id), then those about no field.
 */
export function problemSummary(problems: FormProblems | undefined, ids: Readonly<Record<string, string>>): SafeHtml {
  if (!problems) return html``;
  // In the form's order (the order of `ids`), whatever order they were found in.
  const order = Object.keys(ids);
  const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
  const linked = Object.entries(problems.fields).sort(([a], [b]) => rank(a) - rank(b));
  const count = linked.length + problems.general.length;
  if (count === 0) return html``;
  return html`<div class="error" role="alert">
<p><strong>${count === 1 ? 'That did not work:' : `That did not work: ${count} problems`}</strong>${count === 1 && linked.length === 0 ? html` ${problems.general[0]}` : html``}</p>
${
  count === 1 && linked.length === 0
    ? html``
    : html`<ul>${linked.map(([name, message]) => html`<li>${ids[name] ? html`<a href="#${ids[name]}">${message}</a>` : message}</li>`)}${problems.general.map((m) => html`<li>${m}</li>`)}</ul>`
}
</div>`;
}
