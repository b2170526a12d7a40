/**
 * The New grant form (DESIGN §16, §21, §26): its fields as a table (`GRANT_FIELDS`: a field added
 * there is rendered, read into the API's request and given its problems), the request it makes,
 * and the agent it names — picked from the agents the payer has dealt with, found by name, or
 * typed as an id. The page and the submit are grants.ts's.
 */
import { LosslessNumber } from 'lossless-json';
import { MAX_SCOPE_ENTRIES } from '../../core/grant-scope';
import type { Grant } from '../../core/grants';
import { ID_PATTERNS } from '../../core/ids';
import { CURRENCIES, isCurrency } from '../../core/money';
import { html, type SafeHtml } from '../../http/html';
import { listMyGrants } from '../../use-cases/identity/grants';
import { listMyCharges } from '../../use-cases/identity/payers';
import type { ConsoleSession } from '../page';
import { agentLabel, KNOWN_AGENTS_CHARGES, type KnownAgent } from './agents';
import { listEntries, SCOPE_LABELS } from './grant-scope';
import { csrfField, type FormCheck, type FormProblems, formField, onceField, problemSummary } from './ui';

export const GRANTS = '/console/grants';
export const DAY_SECONDS = 86_400;

/**
 * The New grant form, one row a field (DESIGN §26: a field is added here, and the form, the
 * request and the problems beside each field follow): the form's name, the API's path of it in the
 * request (`limits.daily`), its label and hint, how it is read (`kind`) and, for the limits, the
 * fieldset it sits in.
 */
interface GrantField {
  name: string;
  api: string;
  label: string;
  hint: string;
  /**
   * `amount`: a decimal; `whole`: a count of days (→ ttlSeconds); `currency`: the select; `text`:
   * trimmed, left out when empty; `list`: a text area of entries, one a line (or comma), left out when empty.
   */
  kind: 'text' | 'amount' | 'whole' | 'currency' | 'list';
  group?: keyof typeof GROUPS;
  attrs?: SafeHtml;
}

/** The fieldsets fields of a `group` sit in, in the form's order. */
const GROUPS = {
  limits: { legend: 'Limits (leave a limit empty for none)', hint: '' },
  // DESIGN §27, docs/grants.md "Scope": where the agent may pay.
  scope: {
    legend: 'Where the agent may pay (optional)',
    hint: 'Leave both empty to let the agent pay anywhere. With either filled in, the grant pays x402 purchases only, and only these; plain charges are refused.',
  },
} as const;

const GRANT_FIELDS: readonly GrantField[] = [
  {
    name: 'agentId',
    api: 'agentId',
    label: 'Agent ID',
    hint: 'Type the name of an agent you have dealt with and choose it, or paste the id the agent gives you (it starts with “a”).',
    kind: 'text',
    attrs: html`required autocomplete="off" spellcheck="false" list="g-agents"`,
  },
  { name: 'currency', api: 'currency', label: 'Currency', hint: '', kind: 'currency' },
  { name: 'perCharge', api: 'limits.perCharge', label: 'Per charge', hint: 'The most one charge may be.', kind: 'amount', group: 'limits' },
  { name: 'hourly', api: 'limits.hourly', label: 'Hourly', hint: 'The most in one UTC clock hour.', kind: 'amount', group: 'limits' },
  { name: 'daily', api: 'limits.daily', label: 'Daily', hint: 'The most in one UTC day.', kind: 'amount', group: 'limits' },
  {
    name: 'monthly',
    api: 'limits.monthly',
    label: 'Monthly',
    hint: 'The most in one UTC calendar month.',
    kind: 'amount',
    group: 'limits',
  },
  { name: 'total', api: 'limits.total', label: 'Total', hint: 'The most over the grant’s whole life.', kind: 'amount', group: 'limits' },
  {
    name: 'approvalAbove',
    api: 'approvalAbove',
    label: 'Approval above',
    hint: 'A charge above this waits for your approval.',
    kind: 'amount',
    group: 'limits',
  },
  {
    name: 'scopePayees',
    api: 'scope.payees',
    label: 'Payees',
    hint: `Solana addresses a purchase may pay, one per line (at most ${MAX_SCOPE_ENTRIES}).`,
    kind: 'list',
    group: 'scope',
  },
  {
    name: 'scopeHosts',
    api: 'scope.hosts',
    label: 'Hosts',
    hint: `Sites a purchase may be for, one per line (at most ${MAX_SCOPE_ENTRIES}): api.example.com, or *.example.com for its sub-domains (not example.com itself).`,
    kind: 'list',
    group: 'scope',
  },
  {
    name: 'expiresAfterDays',
    api: 'ttlSeconds',
    label: 'Expires after (days)',
    hint: 'From 1 to 365. Leave empty for a grant that lasts until you revoke it.',
    kind: 'whole',
    attrs: html`inputmode="numeric" autocomplete="off"`,
  },
  {
    name: 'description',
    api: 'description',
    label: 'Description',
    hint: 'What the grant is for, for example “weather lookups”.',
    kind: 'text',
    attrs: html`maxlength="255" autocomplete="off"`,
  },
];

export const FIELDS = GRANT_FIELDS.map((f) => f.name);
export type GrantForm = Readonly<Record<string, string>>;
const fieldId = (name: string) => `g-${name}`;
/** The API's field paths, as the form labels them (a scope entry's problem names its line). */
export const LABELS: Readonly<Record<string, string>> = {
  ...SCOPE_LABELS,
  ...Object.fromEntries(GRANT_FIELDS.map((f) => [f.api, f.label])),
};
/** The API's field paths, as the form names them. */
export const FORM_NAMES: Readonly<Record<string, string>> = Object.fromEntries(GRANT_FIELDS.map((f) => [f.api, f.name]));
const FIELD_IDS: Readonly<Record<string, string>> = Object.fromEntries(GRANT_FIELDS.map((f) => [f.name, fieldId(f.name)]));

/** The request the form makes (the API's shape: `limits.daily` nested), each field read by its kind; malformed ones noted in `check`. */
export function requestOf(form: GrantForm, check: FormCheck): Record<string, unknown> {
  const request: Record<string, unknown> = {};
  const put = (path: string, value: unknown) => {
    const parts = path.split('.');
    let at = request;
    for (const part of parts.slice(0, -1)) {
      at[part] ??= {};
      at = at[part] as Record<string, unknown>;
    }
    at[parts[parts.length - 1] ?? path] = value;
  };
  for (const f of GRANT_FIELDS) {
    const text = (form[f.name] ?? '').trim();
    if (f.kind === 'currency') put(f.api, form[f.name]);
    else if (f.kind === 'list') {
      const entries = listEntries(form[f.name]);
      if (entries.length > 0) put(f.api, entries);
    } else if (f.kind === 'amount') {
      const amount = check.amount(f.name, f.label);
      if (amount !== undefined) put(f.api, amount);
    } else if (f.kind === 'whole') {
      const days = check.whole(f.name, f.label);
      if (days !== undefined) put(f.api, new LosslessNumber(String(days * DAY_SECONDS)));
    } else if (text !== '' || f.name === 'agentId') put(f.api, text);
  }
  return request;
}

export function newGrantForm(
  session: ConsoleSession,
  refused: { problems: FormProblems; form: GrantForm } | undefined,
  agents: readonly KnownAgent[],
): SafeHtml {
  const v = refused?.form ?? {};
  const field = (f: GrantField) =>
    formField({
      id: fieldId(f.name),
      name: f.name,
      label: f.label,
      ...(f.hint ? { hint: f.hint } : {}),
      value: v[f.name] ?? '',
      problem: refused?.problems.fields[f.name],
      ...(f.kind === 'currency'
        ? { options: CURRENCIES.map((c) => ({ value: c, label: c })), value: isCurrency(v[f.name]) ? v[f.name] : 'USD' }
        : {}),
      ...(f.kind === 'list' ? { rows: 3 } : {}),
      attrs:
        f.attrs ??
        (f.kind === 'amount'
          ? html`inputmode="decimal" autocomplete="off"`
          : f.kind === 'list'
            ? html`spellcheck="false" autocomplete="off"`
            : html``),
    });
  const rows = GRANT_FIELDS.flatMap((f) => {
    if (!f.group) return [field(f)];
    const members = GRANT_FIELDS.filter((g) => g.group === f.group);
    if (f !== members[0]) return [];
    const group = GROUPS[f.group];
    return [
      html`<fieldset>
<legend>${group.legend}</legend>
${group.hint ? html`<p class="hint">${group.hint}</p>` : html``}
${members.map(field)}
</fieldset>`,
    ];
  });
  return html`
<section aria-labelledby="new-h">
<h2 id="new-h">New grant</h2>
<form method="post" action="${GRANTS}" aria-labelledby="new-h" novalidate>
${csrfField(session)}${onceField()}
${problemSummary(refused?.problems, FIELD_IDS)}
${agentChoices(agents)}
${rows}
<button type="submit">Create grant</button>
</form>
</section>`;
}

/**
 * The agents the payer has dealt with, for the Agent ID field's list (a `<datalist>`: the browser
 * offers them as the payer types a name, without script; each fills in the id). Also listed
 * visibly when there are few, so a person sees whom they can pick.
 */
function agentChoices(agents: readonly KnownAgent[]): SafeHtml {
  if (agents.length === 0) return html``;
  return html`<datalist id="g-agents">${agents.map((a) => html`<option value="${a.id}">${agentLabel(a)}</option>`)}</datalist>`;
}

/**
 * The agents the payer has dealt with: those that charged them or asked for their approval (the
 * newest KNOWN_AGENTS_CHARGES charges: one Query) and those they granted (the grants the page has
 * read already). An agent's grant request reaches the payer as a link and is stored under the
 * agent alone: one the payer allowed is a grant here; one denied is not listed (docs/console-pages.md).
 */
export async function dealtWith(userId: string, baseUrl: string, grants: readonly Grant[]): Promise<KnownAgent[]> {
  const charges = await listMyCharges(userId, { limit: KNOWN_AGENTS_CHARGES }, baseUrl);
  const byId = new Map<string, KnownAgent>();
  const add = (id: string, name: string | null | undefined) => {
    const known = byId.get(id) ?? { id, name: undefined, currencies: [] };
    if (name && !known.name) known.name = name;
    byId.set(id, known);
  };
  for (const g of grants) add(g.agentId, g.agentName);
  for (const c of charges.data) add(c.agent.id, c.agent.name);
  return [...byId.values()].sort((a, b) => agentLabel(a).localeCompare(agentLabel(b)));
}

/**
 * What the Agent ID field names: an id as typed, or the one agent the payer has dealt with of that
 * name (any case); several of that name is a problem beside the field, none leaves the text for
 * the schema to refuse as no agent id.
 */
export async function agentNamed(session: ConsoleSession, baseUrl: string, typed: string, check: FormCheck): Promise<string> {
  if (typed === '' || ID_PATTERNS.agent.test(typed)) return typed;
  const grants = (await listMyGrants(session.userId, { limit: 100 })).grants;
  const named = (await dealtWith(session.userId, baseUrl, grants)).filter((a) => a.name?.toLowerCase() === typed.toLowerCase());
  if (named.length > 1)
    check.note(
      'agentId',
      `Agent ID: ${named.length} agents you have dealt with are named “${typed}”: choose one from the list, or type its id`,
    );
  return named.length === 1 && named[0] ? named[0].id : typed;
}
