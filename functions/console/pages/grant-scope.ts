/**
 * The grant card's scope and the form's words for it (DESIGN §27, docs/grants.md "Scope"). The form's
 * two text areas are rows of grant-form.ts's table (kind `list`, one entry a line or comma): the API
 * normalises and checks each entry (contracts/grants.ts), so the form only splits.
 */
import { MAX_SCOPE_ENTRIES } from '../../core/grant-scope';
import type { Grant } from '../../core/grants';
import { html, type SafeHtml } from '../../http/html';

/** The API's scope paths as the form names them (an entry's problem names its line). */
export const SCOPE_LABELS: Readonly<Record<string, string>> = {
  scope: 'Where the agent may pay',
  'scope.payees': 'Payees',
  'scope.hosts': 'Hosts',
  ...Object.fromEntries(
    Array.from({ length: MAX_SCOPE_ENTRIES + 1 }, (_, i) => [
      [`scope.payees.${i}`, `Payee on line ${i + 1}`],
      [`scope.hosts.${i}`, `Host on line ${i + 1}`],
    ]).flat(),
  ),
};

/** A text area's entries: one a line (or comma), trimmed, empty ones dropped. */
export const listEntries = (text: string | undefined): string[] =>
  (text ?? '')
    .split(/[\n,]/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0);

/** The card's rows: where the grant's agent may pay. */
export function scopeRows(g: Pick<Grant, 'scope'>): SafeHtml {
  if (!g.scope) return html``;
  return html`${g.scope.payees ? html`<dt>Payees</dt><dd class="mono">${g.scope.payees.join(', ')}</dd>` : html``}
${g.scope.hosts ? html`<dt>Hosts</dt><dd class="wrap">${g.scope.hosts.join(', ')}</dd>` : html``}
<dt>Plain charges</dt><dd>refused: the grant pays only the purchases above</dd>`;
}
