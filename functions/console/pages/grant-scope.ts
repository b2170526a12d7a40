/**
 * The grant form's and card's scope (DESIGN §27, docs/grants.md "Scope"): apart from grants.ts so
 * the page's other work merges without touching it. Two text areas, one entry per line (or comma):
 * the API normalises and checks each entry (contracts/grants.ts), so the form only splits.
 */
import { MAX_SCOPE_ENTRIES } from '../../core/grant-scope';
import type { Grant } from '../../core/grants';
import { html, type SafeHtml } from '../../http/html';

export const SCOPE_FIELDS = ['scopePayees', 'scopeHosts'] as const;
type ScopeForm = Partial<Record<(typeof SCOPE_FIELDS)[number], string>>;

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

const entries = (text: string | undefined): string[] =>
  (text ?? '')
    .split(/[\n,]/)
    .map((line) => line.trim())
    .filter((line) => line.length > 0);

/** The scope the form asks for, as the API takes it; undefined when both areas are empty. */
export function scopeFromForm(form: ScopeForm): { payees?: string[]; hosts?: string[] } | undefined {
  const payees = entries(form.scopePayees);
  const hosts = entries(form.scopeHosts);
  if (payees.length === 0 && hosts.length === 0) return undefined;
  return { ...(payees.length > 0 ? { payees } : {}), ...(hosts.length > 0 ? { hosts } : {}) };
}

/** The form's fieldset: two optional lists. */
export function scopeFieldset(v: ScopeForm): SafeHtml {
  const area = (name: (typeof SCOPE_FIELDS)[number], label: string, hint: string) => html`
<div class="field">
<label for="g-${name}">${label}</label>
<textarea id="g-${name}" name="${name}" rows="3" spellcheck="false" autocomplete="off" aria-describedby="g-${name}-hint">${v[name] ?? ''}</textarea>
<p class="hint" id="g-${name}-hint">${hint}</p>
</div>`;
  return html`<fieldset>
<legend>Where the agent may pay (optional)</legend>
<p class="hint">Leave both empty to let the agent pay anywhere. With either filled in, the grant pays x402 purchases only, and only these; plain charges are refused.</p>
${area('scopePayees', 'Payees', `Solana addresses a purchase may pay, one per line (at most ${MAX_SCOPE_ENTRIES}).`)}
${area('scopeHosts', 'Hosts', `Sites a purchase may be for, one per line (at most ${MAX_SCOPE_ENTRIES}): api.example.com, or *.example.com for its sub-domains (not example.com itself).`)}
</fieldset>`;
}

/** The card's rows: where the grant's agent may pay. */
export function scopeRows(g: Pick<Grant, 'scope'>): SafeHtml {
  if (!g.scope) return html``;
  return html`${g.scope.payees ? html`<dt>Payees</dt><dd class="mono">${g.scope.payees.join(', ')}</dd>` : html``}
${g.scope.hosts ? html`<dt>Hosts</dt><dd class="wrap">${g.scope.hosts.join(', ')}</dd>` : html``}
<dt>Plain charges</dt><dd>refused: the grant pays only the purchases above</dd>`;
}
