/**
 * HTML safely: an escaping template tag for every page the service renders (the approval, consent
 * and home pages, the console). Every value goes through it; only markup it built is SafeHtml.
 */

/** Markup that is already safe to send: built by `html`, never from unescaped input. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or a quoted attribute value: the five characters that can end either, escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/**
 * A template tag that escapes every interpolated value unless it is SafeHtml (a nested `html`);
 * arrays are joined, and null, undefined and false render nothing (`${cond && html`…`}`).
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += fragment(value) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

function fragment(value: unknown): string {
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(fragment).join('');
  if (value === undefined || value === null || value === false) return '';
  return escapeHtml(String(value));
}
