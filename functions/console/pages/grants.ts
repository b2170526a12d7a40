/**
 * Grants (DESIGN §16, §21, §26, §27): every grant the payer gave first, what each has spent of each
 * limit (as words and a bar), its scope, a notice near or at a limit, `Revoke` (through its
 * confirmation) on the active ones; then `New grant` (grant-form.ts), which shows the grant key once
 * — in the answer to the submit itself, never in a URL or a redirect. The API's `issueGrant` and
 * `revokeMyGrant`, under the payer's current account key (a rotation ends every grant, and no grant
 * outlives one).
 */
import { type CreateGrantRequest, createGrantRequestSchema, createGrantSchema } from '../../contracts/grants';
import { validate } from '../../contracts/validation';
import { type Grant, grantStatus, hourOf } from '../../core/grants';
import { isId, newGrantId } from '../../core/ids';
import { formatAmount, type Minor } from '../../core/money';
import { periodsOf } from '../../core/policy';
import { html, type SafeHtml } from '../../http/html';
import { runFor } from '../../operations/execute';
import { userRevokeGrantOperation } from '../../operations/grants';
import { actingAccountKeyHash } from '../../use-cases/identity/console-forms';
import { issueGrant, listMyGrants, readGrant } from '../../use-cases/identity/grants';
import { copyButton } from '../copy';
import type { ConsolePage, ConsoleResult, ConsoleRoute, ConsoleSession } from '../page';
import { payerOf } from './caller';
import {
  agentNamed,
  DAY_SECONDS,
  dealtWith,
  FIELDS,
  FORM_NAMES,
  GRANTS,
  type GrantForm,
  LABELS,
  newGrantForm,
  requestOf,
} from './grant-form';
import { grantLimitNotices } from './grant-notices';
import { scopeRows } from './grant-scope';
import { once } from './once';
import { FormCheck, type FormProblems, money, notFound, page, refusal, when, zoneNote } from './ui';

const PAGE_SIZE = 50;

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
${grantLimitNotices(list.grants, now)}
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
  if (g.limits.hourly !== undefined) {
    const spentThisHour = g.spentHour?.p === hourOf(now) ? g.spentHour.v : 0;
    limits.push(bar('Hourly', spentThisHour, g.limits.hourly, `${m(spentThisHour)} of ${m(g.limits.hourly)} this hour (UTC)`));
  }
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
${scopeRows(g)}
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
