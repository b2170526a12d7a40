/**
 * Grants (DESIGN §16, §21): every grant the payer gave, what each has spent of each limit, `Revoke`
 * on the active ones, and `New grant`, which shows the grant key once — in the answer to the
 * submit itself, never in a URL or a redirect. The API's `issueGrant` and `revokeMyGrant`, under
 * the payer's current account key (a rotation ends every grant, and no grant outlives one).
 */
import { LosslessNumber } from 'lossless-json';
import { type CreateGrantRequest, createGrantRequestSchema, createGrantSchema } from '../../contracts/grants';
import { validate } from '../../contracts/validation';
import { type Grant, grantStatus } from '../../core/grants';
import { ID_PATTERNS, isId, newGrantId } from '../../core/ids';
import { CURRENCIES, formatAmount, isCurrency, type Minor } from '../../core/money';
import { periodsOf } from '../../core/policy';
import { html, type SafeHtml } from '../../http/html';
import { runFor } from '../../operations/execute';
import { userRevokeGrantOperation } from '../../operations/grants';
import { actingAccountKeyHash } from '../../use-cases/identity/console-forms';
import { issueGrant, listMyGrants, readGrant } from '../../use-cases/identity/grants';
import { listMyCharges } from '../../use-cases/identity/payers';
import { copyButton } from '../copy';
import type { ConsolePage, ConsoleResult, ConsoleRoute, ConsoleSession } from '../page';
import { agentLabel, KNOWN_AGENTS_CHARGES, type KnownAgent } from './agents';
import { payerOf } from './caller';
import { once } from './once';
import {
  csrfField,
  FormCheck,
  type FormProblems,
  formField,
  money,
  notFound,
  onceField,
  page,
  problemSummary,
  refusal,
  when,
  zoneNote,
} from './ui';

const GRANTS = '/console/grants';
const PAGE_SIZE = 50;
const DAY_SECONDS = 86_400;

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
  /** `amount`: a decimal; `whole`: a count of days (→ ttlSeconds); `currency`: the select; `text`: trimmed, left out when empty. */
  kind: 'text' | 'amount' | 'whole' | 'currency';
  group?: 'limits';
  attrs?: SafeHtml;
}

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

const FIELDS = GRANT_FIELDS.map((f) => f.name);
type GrantForm = Readonly<Record<string, string>>;
const fieldId = (name: string) => `g-${name}`;
/** The API's field paths, as the form labels them. */
const LABELS: Readonly<Record<string, string>> = Object.fromEntries(GRANT_FIELDS.map((f) => [f.api, f.label]));
/** The API's field paths, as the form names them. */
const FORM_NAMES: Readonly<Record<string, string>> = Object.fromEntries(GRANT_FIELDS.map((f) => [f.api, f.name]));
const FIELD_IDS: Readonly<Record<string, string>> = Object.fromEntries(GRANT_FIELDS.map((f) => [f.name, fieldId(f.name)]));

/** The request the form makes (the API's shape: `limits.daily` nested), each field read by its kind; malformed ones noted in `check`. */
function requestOf(form: GrantForm, check: FormCheck): Record<string, unknown> {
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
    else if (f.kind === 'amount') {
      const amount = check.amount(f.name, f.label);
      if (amount !== undefined) put(f.api, amount);
    } else if (f.kind === 'whole') {
      const days = check.whole(f.name, f.label);
      if (days !== undefined) put(f.api, new LosslessNumber(String(days * DAY_SECONDS)));
    } else if (text !== '' || f.name === 'agentId') put(f.api, text);
  }
  return request;
}

const grantsPage: ConsolePage = async (session, req) => render(session, req.baseUrl, req.query.after);

async function render(
  session: ConsoleSession,
  baseUrl: string,
  after: string | undefined,
  refused?: { problems: FormProblems; form: GrantForm },
): Promise<ConsoleResult> {
  const now = new Date();
  const list = await listMyGrants(session.userId, { limit: PAGE_SIZE, ...(isId('grant', after) ? { after } : {}) });
  const body = html`
<p>A grant lets one agent charge you in one currency, within the limits you set. Give the agent the grant key, never your account key. You can revoke a grant at any time; it stops working at once.</p>
${refused ? html`<p><a href="#new-h">Your new grant was not created: see what to fix</a></p>` : html``}
<section aria-labelledby="list-h">
<h2 id="list-h">Your grants</h2>
${
  list.grants.length === 0 && !after
    ? html`<p class="empty">No grants yet. Create one below for an agent you trust, or approve an agent's grant request from the link it sends you.</p>`
    : html`<ul class="cards">${list.grants.map((g) => grantCard(g, session, now))}</ul>${zoneNote(session)}`
}
<nav class="pager" aria-label="Pages of grants">
${after ? html`<a href="${GRANTS}">Newest</a>` : html``}
${list.lastId ? html`<a href="${GRANTS}?after=${list.lastId}" rel="next">Next page</a>` : html``}
</nav>
</section>
${newGrantForm(session, refused, await dealtWith(session.userId, baseUrl, list.grants))}`;
  return page('Grants', 'grants', body, refused?.problems.status ?? 200);
}

function grantCard(g: Grant, session: ConsoleSession, now: Date): SafeHtml {
  const status = grantStatus(g, now);
  const m = (minor: Minor) => money(formatAmount(minor, g.currency), g.currency);
  const { day, month } = periodsOf(now);
  const spentToday = g.spentDay?.p === day ? g.spentDay.v : 0;
  const spentThisMonth = g.spentMonth?.p === month ? g.spentMonth.v : 0;
  const limits: SafeHtml[] = [];
  // Spent against a limit as a bar (a <meter>, named by its words), yellow from 80 % on; the words say it first.
  const bar = (name: string, spent: Minor, limit: Minor, words: string) =>
    html`<dt>${name}</dt><dd>${words}<meter class="spent" min="0" max="${limit}" value="${Math.min(spent, limit)}" low="${Math.floor(limit * 0.8)}" high="${Math.floor(limit * 0.95)}" optimum="0" aria-label="${name}: ${words}"></meter></dd>`;
  if (g.limits.perCharge !== undefined) limits.push(html`<dt>Per charge</dt><dd>at most ${m(g.limits.perCharge)}</dd>`);
  if (g.limits.daily !== undefined)
    limits.push(bar('Daily', spentToday, g.limits.daily, `${m(spentToday)} of ${m(g.limits.daily)} today (UTC)`));
  if (g.limits.monthly !== undefined)
    limits.push(bar('Monthly', spentThisMonth, g.limits.monthly, `${m(spentThisMonth)} of ${m(g.limits.monthly)} this month (UTC)`));
  limits.push(
    g.limits.total !== undefined
      ? bar('Total', g.spent, g.limits.total, `${m(g.spent)} of ${m(g.limits.total)}`)
      : html`<dt>Spent</dt><dd>${m(g.spent)}${limits.length === 0 ? ' (no limits)' : ''}</dd>`,
  );
  return html`<li class="card" id="${g.id}">
<h3>${g.agentName} <span class="muted">· ${g.currency}</span></h3>
${g.description ? html`<p class="wrap">${g.description}</p>` : html``}
<dl>
<dt>Status</dt><dd><span class="status status-${status}">${status === 'active' ? 'Active' : status === 'revoked' ? 'Revoked' : 'Expired'}</span></dd>
${limits}
${g.approvalAbove !== undefined ? html`<dt>Approval above</dt><dd>charges above ${m(g.approvalAbove)} wait for your approval</dd>` : html``}
<dt>Expires</dt><dd>${g.expiresAt ? when(g.expiresAt, session) : 'never (until revoked)'}</dd>
${g.revokedAt ? html`<dt>Revoked</dt><dd>${when(g.revokedAt, session)}</dd>` : html``}
<dt>Agent ID</dt><dd class="mono">${g.agentId}</dd>
<dt>Grant ID</dt><dd class="mono">${g.id}</dd>
</dl>
${
  status === 'active'
    ? html`<p><a class="button danger" href="${GRANTS}/${g.id}/revoke">Revoke<span class="visually-hidden"> the grant of ${g.agentName} in ${g.currency}</span></a></p>`
    : html``
}
</li>`;
}

function newGrantForm(
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
      attrs: f.attrs ?? (f.kind === 'amount' ? html`inputmode="decimal" autocomplete="off"` : html``),
    });
  const limits = GRANT_FIELDS.filter((f) => f.group === 'limits');
  const rows = GRANT_FIELDS.flatMap((f) => {
    if (f.group !== 'limits') return [field(f)];
    if (f !== limits[0]) return [];
    return [
      html`<fieldset>
<legend>Limits (leave a limit empty for none)</legend>
${limits.map(field)}
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
async function dealtWith(userId: string, baseUrl: string, grants: readonly Grant[]): Promise<KnownAgent[]> {
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
async function agentNamed(session: ConsoleSession, baseUrl: string, typed: string, check: FormCheck): Promise<string> {
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

/** POST /console/grants: the grant, made once per form key; its key shown in this answer only. */
const createGrant: ConsolePage = async (session, req) => {
  const form: GrantForm = Object.fromEntries(FIELDS.map((f) => [f, req.form[f] ?? '']));
  const check = new FormCheck(form, { labels: LABELS, fields: FORM_NAMES, bound: inDays });
  try {
    // The API's schema judges every field the form could read: every problem shows at once.
    const named = await agentNamed(session, req.baseUrl, (form.agentId ?? '').trim(), check);
    const request = { ...requestOf(form, check), agentId: named };
    let terms: CreateGrantRequest;
    try {
      terms = validate(createGrantSchema, request);
    } catch (error) {
      // zod checks the amounts against the currency (a transform) only once every field parsed:
      // the terms again without the fields found wrong, so a bad amount shows beside them too.
      if (!check.absorb(error)) throw error;
      const { agentId: _agentId, ...terms } = request;
      const alone = Object.fromEntries(Object.entries(terms).filter(([path]) => !check.has(FORM_NAMES[path] ?? path)));
      try {
        validate(createGrantRequestSchema, alone);
      } catch (more) {
        if (!check.absorb(more)) throw more;
      }
      throw error;
    }
    check.orRefuse();
    // A key-opened session acts with the key that opened it, never a newer one (DESIGN §24).
    const accountKeyHash = await actingAccountKeyHash(session.userId, session.accountKeyHash);
    if (!accountKeyHash) throw new Error('a payer without an account key cannot issue grants');
    const { agentId, ...grantTerms } = terms;
    const done = await once<{ grant: Grant; key: string }, { grantId: string }>(
      session,
      'grant',
      req.form,
      Object.fromEntries(FIELDS.map((f) => [f, (form[f] ?? '').trim()])),
      (record) => {
        const id = newGrantId();
        return issueGrant({ userId: session.userId, accountKeyHash }, agentId, grantTerms, {
          id,
          also: [record.conditioned({ grantId: id })],
        });
      },
    );
    if (done.replayed) return alreadyCreated(session, done.stored.grantId);
    return shownOnce(done.value.grant, done.value.key);
  } catch (error) {
    return render(session, req.baseUrl, undefined, { problems: check.refused(error), form });
  }
};

/** The API bounds a grant's life in seconds; the form speaks in whole days (at least 1). */
const inDays = (field: string, seconds: number) => (field === 'ttlSeconds' ? Math.max(1, Math.floor(seconds / DAY_SECONDS)) : undefined);

/**
 * The list from a POST's answer (which the browser shows at /console/grants): a bare `#id` there
 * would be a same-page jump that leaves the shown-once key on screen, so the link carries a query
 * (which the list ignores) to load the list for real.
 */
const backToList = (grantId: string) => `${GRANTS}?created=${encodeURIComponent(grantId)}#${encodeURIComponent(grantId)}`;

function shownOnce(grant: Grant, key: string): ConsoleResult {
  return page(
    'Grant created',
    'grants',
    html`
<p>${grant.agentName} can now charge you in ${grant.currency} within the limits you set. Give it this grant key. <strong>It is shown only this once</strong>: we keep only a fingerprint of it, so copy it now.</p>
<div class="field secret">
<label for="grant-key">Grant key</label>
<textarea id="grant-key" readonly rows="3" spellcheck="false" autocomplete="off">${key}</textarea>
${copyButton('grant-key', 'the grant key')}
</div>
<p class="hint">The agent sends it in the <code>x-user-key</code> header of its charges. It works only for this agent (${grant.agentId}) and only in ${grant.currency}. If it leaks, revoke the grant on the Grants page: it stops working at once.</p>
<p><a href="${backToList(grant.id)}">Back to Grants</a></p>`,
  );
}

async function alreadyCreated(session: ConsoleSession, grantId: string): Promise<ConsoleResult> {
  const grant = await readGrant(session.userId, grantId).catch(() => undefined);
  return page(
    'Grant already created',
    'grants',
    html`
<p>This form was already submitted, and the grant${grant ? ` for ${grant.agentName} in ${grant.currency}` : ''} was created then. Its key was shown once, in the answer to that first submit, and cannot be shown again.</p>
<p>If you did not copy the key, revoke this grant on the Grants page and create a new one.</p>
<p><a href="${backToList(grantId)}">Back to Grants</a></p>`,
  );
}

/** POST /console/grants/:id/revoke: 404 for an id that is not one of this payer's grants. */
const revokeGrant: ConsolePage = async (session, req) => {
  try {
    await runFor(userRevokeGrantOperation, payerOf(session), { params: { id: req.params.id } });
  } catch (error) {
    if (refusal(error).status === 404) return notFound('grants', 'Grant', { href: GRANTS, label: 'Back to Grants' });
    throw error;
  }
  return { kind: 'redirect', location: `${GRANTS}#${encodeURIComponent(req.params.id ?? '')}` };
};

export const GRANTS_ROUTES: readonly ConsoleRoute[] = [
  { method: 'GET', path: GRANTS, page: grantsPage },
  { method: 'POST', path: GRANTS, page: createGrant },
  { method: 'POST', path: `${GRANTS}/:id/revoke`, page: revokeGrant },
];
