/**
 * Grants (DESIGN §16, §21): every grant the payer gave, what each has spent of each limit, `Revoke`
 * on the active ones, and `New grant`, which shows the grant key once — in the answer to the
 * submit itself, never in a URL or a redirect. The API's `issueGrant` and `revokeMyGrant`, under
 * the payer's current account key (a rotation ends every grant, and no grant outlives one).
 */
import { LosslessNumber } from 'lossless-json';
import { createGrantSchema } from '../../contracts/grants';
import { validate } from '../../contracts/validation';
import { GRANT_LIMIT_NAMES, type Grant, grantStatus, hourOf } from '../../core/grants';
import { isId, newGrantId } from '../../core/ids';
import { formatAmount, isCurrencyOn, type Minor } from '../../core/money';
import { periodsOf } from '../../core/policy';
import { html, type SafeHtml } from '../../http/html';
import { runFor } from '../../operations/execute';
import { userRevokeGrantOperation } from '../../operations/grants';
import { actingAccountKeyHash } from '../../use-cases/identity/console-forms';
import { issueGrant, listMyGrants, readGrant } from '../../use-cases/identity/grants';
import type { ConsolePage, ConsoleResult, ConsoleRoute, ConsoleSession } from '../page';
import { payerOf } from './caller';
import { grantLimitNotices } from './grant-notices';
import { SCOPE_FIELDS, SCOPE_LABELS, scopeFieldset, scopeFromForm, scopeRows } from './grant-scope';
import { once } from './once';
import { amountField, csrfField, errorBox, money, notFound, onceField, page, refusal, when, wholeField, zoneNote } from './ui';

const GRANTS = '/console/grants';
const PAGE_SIZE = 50;
const DAY_SECONDS = 86_400;

/** The API's field paths, as the form labels them. */
const LABELS = {
  'limits.perCharge': 'Per charge',
  'limits.hourly': 'Hourly',
  'limits.daily': 'Daily',
  'limits.monthly': 'Monthly',
  'limits.total': 'Total',
  approvalAbove: 'Approval above',
  ttlSeconds: 'Expires after (days)',
  agentId: 'Agent ID',
  currency: 'Currency',
  description: 'Description',
  ...SCOPE_LABELS,
};

const FIELDS = [
  'agentId',
  'currency',
  'perCharge',
  'hourly',
  'daily',
  'monthly',
  'total',
  'approvalAbove',
  'expiresAfterDays',
  'description',
  ...SCOPE_FIELDS,
] as const;
type GrantForm = Partial<Record<(typeof FIELDS)[number], string>>;

const grantsPage: ConsolePage = async (session, req) => render(session, req.query.after);

async function render(
  session: ConsoleSession,
  after: string | undefined,
  refused?: { status: number; message: string; form: GrantForm },
): Promise<ConsoleResult> {
  const now = new Date();
  const list = await listMyGrants(session.userId, { limit: PAGE_SIZE, ...(isId('grant', after) ? { after } : {}) });
  const body = html`
<p>A grant lets one agent charge you in one currency, within the limits you set. Give the agent the grant key, never your account key. You can revoke a grant at any time; it stops working at once.</p>
${grantLimitNotices(list.grants, now)}
${newGrantForm(session, refused)}
<section aria-labelledby="list-h">
<h2 id="list-h">Your grants</h2>
${
  list.grants.length === 0 && !after
    ? html`<p class="empty">No grants yet. Create one above for an agent you trust, or approve an agent's grant request from the link it sends you.</p>`
    : html`<ul class="cards">${list.grants.map((g) => grantCard(g, session, now))}</ul>${zoneNote(session)}`
}
<nav class="pager" aria-label="Pages of grants">
${after ? html`<a href="${GRANTS}">Newest</a>` : html``}
${list.lastId ? html`<a href="${GRANTS}?after=${list.lastId}" rel="next">Next page</a>` : html``}
</nav>
</section>`;
  return page('Grants', 'grants', body, refused?.status ?? 200);
}

function grantCard(g: Grant, session: ConsoleSession, now: Date): SafeHtml {
  const status = grantStatus(g, now);
  const m = (minor: Minor) => money(formatAmount(minor, g.currency), g.currency);
  const { day, month } = periodsOf(now);
  const spentToday = g.spentDay?.p === day ? g.spentDay.v : 0;
  const spentThisMonth = g.spentMonth?.p === month ? g.spentMonth.v : 0;
  const limits: SafeHtml[] = [];
  if (g.limits.perCharge !== undefined) limits.push(html`<dt>Per charge</dt><dd>at most ${m(g.limits.perCharge)}</dd>`);
  if (g.limits.hourly !== undefined) limits.push(hourlyRow(g, now, m));
  if (g.limits.daily !== undefined) limits.push(html`<dt>Daily</dt><dd>${m(spentToday)} of ${m(g.limits.daily)} today (UTC)</dd>`);
  if (g.limits.monthly !== undefined)
    limits.push(html`<dt>Monthly</dt><dd>${m(spentThisMonth)} of ${m(g.limits.monthly)} this month (UTC)</dd>`);
  limits.push(
    g.limits.total !== undefined
      ? html`<dt>Total</dt><dd>${m(g.spent)} of ${m(g.limits.total)}</dd>`
      : html`<dt>Spent</dt><dd>${m(g.spent)}${limits.length === 0 ? ' (no limits)' : ''}</dd>`,
  );
  return html`<li class="card" id="${g.id}">
<h3>${g.agentName} <span class="muted">· ${g.currency}</span></h3>
${g.description ? html`<p class="wrap">${g.description}</p>` : html``}
<dl>
<dt>Status</dt><dd><span class="status status-${status}">${status === 'active' ? 'Active' : status === 'revoked' ? 'Revoked' : 'Expired'}</span></dd>
${limits}
${g.approvalAbove !== undefined ? html`<dt>Approval above</dt><dd>charges above ${m(g.approvalAbove)} wait for your approval</dd>` : html``}
${scopeRows(g)}
<dt>Expires</dt><dd>${g.expiresAt ? when(g.expiresAt, session) : 'never (until revoked)'}</dd>
${g.revokedAt ? html`<dt>Revoked</dt><dd>${when(g.revokedAt, session)}</dd>` : html``}
<dt>Agent ID</dt><dd class="mono">${g.agentId}</dd>
<dt>Grant ID</dt><dd class="mono">${g.id}</dd>
</dl>
${
  status === 'active'
    ? html`<form method="post" action="${GRANTS}/${g.id}/revoke">${csrfField(session)}<button type="submit" class="danger" aria-describedby="${g.id}-what">Revoke</button><span class="visually-hidden" id="${g.id}-what">the grant of ${g.agentName} in ${g.currency}</span></form>`
    : html``
}
</li>`;
}

/** The hourly limit's row: what this UTC hour has spent of it. */
function hourlyRow(g: Grant, now: Date, m: (minor: Minor) => string): SafeHtml {
  const spentThisHour = g.spentHour?.p === hourOf(now) ? g.spentHour.v : 0;
  return html`<dt>Hourly</dt><dd>${m(spentThisHour)} of ${m(g.limits.hourly ?? 0)} this hour (UTC)</dd>`;
}

function newGrantForm(session: ConsoleSession, refused: { message: string; form: GrantForm } | undefined): SafeHtml {
  const v = refused?.form ?? {};
  const text = (name: (typeof FIELDS)[number], label: string, hint: string, attrs: SafeHtml = html``) => html`
<div class="field">
<label for="g-${name}">${label}</label>
<input id="g-${name}" name="${name}" type="text" value="${v[name] ?? ''}" aria-describedby="g-${name}-hint" ${attrs}>
<p class="hint" id="g-${name}-hint">${hint}</p>
</div>`;
  const amount = (name: (typeof FIELDS)[number], label: string, hint: string) =>
    text(name, label, hint, html`inputmode="decimal" autocomplete="off"`);
  return html`
<section aria-labelledby="new-h">
<h2 id="new-h">New grant</h2>
<form method="post" action="${GRANTS}" aria-labelledby="new-h" novalidate>
${csrfField(session)}${onceField()}
${errorBox(refused?.message)}
${text('agentId', 'Agent ID', 'The agent’s id, starting with “a” (the agent tells you its id).', html`required autocomplete="off" spellcheck="false"`)}
<div class="field">
<label for="g-currency">Currency</label>
<select id="g-currency" name="currency">
<option value="USD"${isCurrencyOn(v.currency, 'solana') ? html`` : html` selected`}>USD</option>
<option value="USDC"${isCurrencyOn(v.currency, 'solana') ? html` selected` : html``}>USDC</option>
</select>
</div>
<fieldset>
<legend>Limits (leave a limit empty for none)</legend>
${amount('perCharge', 'Per charge', 'The most one charge may be.')}
${amount('hourly', 'Hourly', 'The most in one UTC clock hour.')}
${amount('daily', 'Daily', 'The most in one UTC day.')}
${amount('monthly', 'Monthly', 'The most in one UTC calendar month.')}
${amount('total', 'Total', 'The most over the grant’s whole life.')}
${amount('approvalAbove', 'Approval above', 'A charge above this waits for your approval.')}
</fieldset>
${scopeFieldset(v)}
${text('expiresAfterDays', 'Expires after (days)', 'From 1 to 365. Leave empty for a grant that lasts until you revoke it.', html`inputmode="numeric" autocomplete="off"`)}
${text('description', 'Description', 'What the grant is for, for example “weather lookups”.', html`maxlength="255" autocomplete="off"`)}
<button type="submit">Create grant</button>
</form>
</section>`;
}

/** POST /console/grants: the grant, made once per form key; its key shown in this answer only. */
const createGrant: ConsolePage = async (session, req) => {
  const form: GrantForm = Object.fromEntries(FIELDS.map((f) => [f, req.form[f] ?? ''])) as GrantForm;
  try {
    const limits = Object.fromEntries(
      GRANT_LIMIT_NAMES.flatMap((name) => {
        const value = amountField(req.form, name, LABELS[`limits.${name}`]);
        return value === undefined ? [] : [[name, value]];
      }),
    );
    const approvalAbove = amountField(req.form, 'approvalAbove', LABELS.approvalAbove);
    const days = wholeField(req.form, 'expiresAfterDays', LABELS.ttlSeconds);
    const description = (form.description ?? '').trim();
    const scope = scopeFromForm(form);
    const terms = validate(createGrantSchema, {
      agentId: (form.agentId ?? '').trim(),
      currency: form.currency,
      ...(Object.keys(limits).length > 0 ? { limits } : {}),
      ...(approvalAbove !== undefined ? { approvalAbove } : {}),
      ...(days !== undefined ? { ttlSeconds: new LosslessNumber(String(days * DAY_SECONDS)) } : {}),
      ...(description ? { description } : {}),
      ...(scope ? { scope } : {}),
    });
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
    const { status, message } = refusal(error, LABELS, inDays);
    return render(session, undefined, { status, message, form });
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
