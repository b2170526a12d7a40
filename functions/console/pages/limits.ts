/**
 * Limits (DESIGN §11, §21): the payer's spending policy per currency and the agents they know,
 * each with `Block` / `Unblock`. A blocked agent is the policy's `agents.<id>.blocked: true` (the
 * API's own representation: every charge of it is refused with 403 `agent blocked by user`, its
 * open holds cannot be captured). Saving goes through the API's `setPolicy` with the API's own
 * schema, so the console cannot store a policy the API would refuse. The form edits the
 * payer-wide rules; per-agent rules set with the API are kept as they are.
 */
import { LosslessNumber } from 'lossless-json';
import { StoredReply } from '../../contracts/api';
import { policySchema } from '../../contracts/request.schemas';
import { validate } from '../../contracts/validation';
import { ID_PATTERNS } from '../../core/ids';
import { CURRENCIES, type Currency } from '../../core/money';
import { html, type SafeHtml } from '../../http/html';
import { refusalText } from '../../messages/catalogue';
import { refuse } from '../../messages/refusal';
import { runFor } from '../../operations/execute';
import { userGetPolicyOperation, userPutPolicyOperation } from '../../operations/payers';
import { policyView } from '../../use-cases/identity/payers';
import type { ConsolePage, ConsoleResult, ConsoleRoute, ConsoleSession } from '../page';
import { agentLabel, type KnownAgent, knownAgents } from './agents';
import { payerOf } from './caller';
import { csrfField, errorBox, FormCheck, type FormProblems, formField, page, problemSummary, refusal } from './ui';

const LIMITS = '/console/limits';
const RULES = [
  { name: 'perCharge', label: 'Per charge', hint: 'the most one charge may be' },
  { name: 'daily', label: 'Daily', hint: 'the most in one UTC day' },
  { name: 'monthly', label: 'Monthly', hint: 'the most in one UTC calendar month' },
  { name: 'approvalAbove', label: 'Approval above', hint: 'charges above this wait for your approval' },
] as const;
type RuleName = (typeof RULES)[number]['name'];
const DEFAULT_WINDOW_SECONDS = 900;

/** The policy as the API shows it (amounts as exact literals). */
type PolicyJson = Partial<Record<RuleName, Partial<Record<Currency, LosslessNumber>>>> & {
  approvalWindowSeconds?: number | LosslessNumber;
  agents?: Record<string, Partial<Record<RuleName, unknown>> & { blocked?: boolean }>;
};

const LABELS: Record<string, string> = {
  approvalWindowSeconds: 'Approval window (minutes)',
  ...Object.fromEntries(RULES.flatMap((r) => CURRENCIES.map((c) => [`${r.name}.${c}`, `${r.label} (${c})`]))),
};

const NOTICES: Readonly<Record<string, string>> = {
  saved: 'Limits saved.',
  blocked: 'Agent blocked: it can no longer charge you.',
  unblocked: 'Agent unblocked: it can charge you again, within your limits and its grants.',
};

const limitsPage: ConsolePage = async (session, req) => render(session, req.baseUrl, NOTICES[req.query.done ?? '']);

async function render(
  session: ConsoleSession,
  baseUrl: string,
  notice?: string,
  refused?: { status: number; message?: string; problems?: FormProblems; form?: Readonly<Record<string, string>> },
): Promise<ConsoleResult> {
  const { agents, policy } = await knownAgents(session.userId, baseUrl);
  const body = html`
${notice ? html`<p class="notice" role="status">${notice}</p>` : html``}
${refused && !refused.form ? errorBox(refused.message) : html``}
<p>Limits apply to every agent and every grant, on top of each grant’s own limits: the stricter one wins. Leave a limit empty for none.</p>
${policyForm(session, policy as PolicyJson, refused)}
<section aria-labelledby="agents-h">
<h2 id="agents-h">Agents</h2>
<p>A blocked agent cannot charge you at all, whatever grant it holds, and cannot capture money it holds from you.</p>
${agents.length === 0 ? html`<p class="empty">No agents yet. Agents you give a grant to, or that charge you, appear here so you can block them.</p>` : agentList(session, agents, policy as PolicyJson)}
</section>`;
  return page('Limits', 'limits', body, refused?.status ?? 200);
}

/** Seconds as minutes with at most two decimals: `round(minutes × 60)` gives the seconds back exactly. */
const minutesOf = (seconds: number) => String(Math.round((seconds / 60) * 100) / 100);

/** The form's field ids by field name (the problem summary links each problem to its field). */
const FIELD_IDS: Readonly<Record<string, string>> = {
  ...Object.fromEntries(RULES.flatMap((r) => CURRENCIES.map((c) => [`${r.name}.${c}`, `l-${r.name}-${c}`]))),
  approvalWindowMinutes: 'l-window',
};

function policyForm(
  session: ConsoleSession,
  policy: PolicyJson,
  refused: { problems?: FormProblems; form?: Readonly<Record<string, string>> } | undefined,
): SafeHtml {
  // A refused save shows what the payer typed; any other page shows the stored policy.
  const typed = refused?.form;
  const value = (field: string, stored: string | undefined) => (typed ? (typed[field] ?? '') : (stored ?? ''));
  const problem = (name: string) => refused?.problems?.fields[name];
  const fieldsets = CURRENCIES.map(
    (c) => html`<fieldset>
<legend>${c}</legend>
${RULES.map((r) => {
  const stored = policy[r.name]?.[c];
  return formField({
    id: `l-${r.name}-${c}`,
    name: `${r.name}.${c}`,
    label: `${r.label} (${c})`,
    hint: `${c}: ${r.hint}.`,
    value: value(`${r.name}.${c}`, stored === undefined ? undefined : String(stored)),
    problem: problem(`${r.name}.${c}`),
    attrs: html`inputmode="decimal" autocomplete="off"`,
  });
})}
</fieldset>`,
  );
  const window = policy.approvalWindowSeconds === undefined ? undefined : Number(String(policy.approvalWindowSeconds));
  return html`
<section aria-labelledby="policy-h">
<h2 id="policy-h">Spending limits</h2>
<form method="post" action="${LIMITS}" aria-labelledby="policy-h" novalidate>
${csrfField(session)}
${problemSummary(refused?.form ? refused.problems : undefined, FIELD_IDS)}
${fieldsets}
${formField({
  id: 'l-window',
  name: 'approvalWindowMinutes',
  label: 'Approval window (minutes)',
  hint: `How long a charge waits for your approval before it expires and the money returns to your balance: 1 to 10080 minutes (7 days). Empty: ${DEFAULT_WINDOW_SECONDS / 60} minutes.`,
  value: value('approvalWindowMinutes', window === undefined ? undefined : minutesOf(window)),
  problem: problem('approvalWindowMinutes'),
  attrs: html`inputmode="decimal" autocomplete="off"`,
})}
<button type="submit">Save limits</button>
</form>
</section>`;
}

function agentList(session: ConsoleSession, agents: readonly KnownAgent[], policy: PolicyJson): SafeHtml {
  const items = agents.map((a) => {
    const rules = policy.agents?.[a.id];
    const blocked = rules?.blocked === true;
    const ownRules = rules && RULES.some((r) => rules[r.name] !== undefined);
    const action = blocked ? 'unblock' : 'block';
    return html`<li class="card row">
<div>
<h3>${agentLabel(a)}</h3>
<p class="mono muted">${a.id}</p>
<p><span class="status ${blocked ? 'status-failed' : 'status-success'}">${blocked ? 'Blocked' : 'Allowed'}</span>${ownRules ? html` <span class="muted">· has its own limits (set with the API)</span>` : html``}</p>
</div>
<form method="post" action="${LIMITS}/agents/${a.id}/${action}">${csrfField(session)}
<button type="submit" class="${blocked ? 'secondary' : 'danger'}" aria-describedby="ag-${a.id}">${blocked ? 'Unblock' : 'Block'}</button>
<span class="visually-hidden" id="ag-${a.id}">${agentLabel(a)}</span>
</form>
</li>`;
  });
  return html`<ul class="cards">${items}</ul>`;
}

/**
 * The form's payer-wide rules over the current policy (its per-agent rules kept), as the API's
 * schema reads it; a malformed field is noted in `check` and left out, so the schema judges the rest.
 */
function policyFromForm(form: Readonly<Record<string, string>>, current: PolicyJson, check: FormCheck): unknown {
  const next: Record<string, unknown> = {};
  for (const r of RULES) {
    const perCurrency: Partial<Record<Currency, LosslessNumber>> = {};
    for (const c of CURRENCIES) {
      const amount = check.amount(`${r.name}.${c}`, `${r.label} (${c})`);
      if (amount !== undefined) perCurrency[c] = amount;
    }
    if (Object.keys(perCurrency).length > 0) next[r.name] = perCurrency;
  }
  const minutes = (form.approvalWindowMinutes ?? '').trim();
  if (minutes !== '' && !/^\d{1,6}(\.\d{1,2})?$/.test(minutes)) {
    check.note('approvalWindowMinutes', refusalText('consoleApprovalWindowInvalid'));
  } else if (minutes !== '') {
    next.approvalWindowSeconds = new LosslessNumber(String(Math.round(Number(minutes) * 60)));
  }
  if (current.agents) next.agents = current.agents;
  return next;
}

/** The API bounds the window in seconds; the form speaks in minutes. */
const inMinutes = (field: string, seconds: number) => (field === 'approvalWindowSeconds' ? seconds / 60 : undefined);

/** The payer's policy as GET /api/v1/users/me/policy shows it. */
async function currentPolicy(session: ConsoleSession): Promise<PolicyJson> {
  const policy = await runFor(userGetPolicyOperation, payerOf(session), {});
  if (policy instanceof StoredReply) throw new Error('a policy read answered a stored reply');
  return policyView(policy) as PolicyJson;
}

/** POST /console/limits (`Save limits`): the whole policy replaced, as PUT /api/v1/users/me/policy does. */
const saveLimits: ConsolePage = async (session, req) => {
  const check = new FormCheck(req.form, { labels: LABELS, fields: { approvalWindowSeconds: 'approvalWindowMinutes' }, bound: inMinutes });
  try {
    const current = await currentPolicy(session);
    const body = policyFromForm(req.form, current, check);
    // The API's schema judges what the form could read, so every problem shows at once.
    if (check.failed) validate(policySchema, body);
    check.orRefuse();
    await runFor(userPutPolicyOperation, payerOf(session), { body });
  } catch (error) {
    const problems = check.refused(error);
    return render(session, req.baseUrl, undefined, { status: problems.status, problems, form: req.form });
  }
  return { kind: 'redirect', location: `${LIMITS}?done=saved` };
};

/** POST /console/limits/agents/:id/block and /unblock: the policy with this one agent's `blocked` changed. */
function setBlocked(blocked: boolean): ConsolePage {
  return async (session, req) => {
    const agentId = req.params.id ?? '';
    try {
      if (!ID_PATTERNS.agent.test(agentId)) throw refuse('consoleNotAnAgentId');
      const current = await currentPolicy(session);
      const agents = { ...(current.agents ?? {}) };
      const { blocked: _was, ...rest } = agents[agentId] ?? {};
      if (blocked) agents[agentId] = { ...rest, blocked: true };
      else if (Object.keys(rest).length > 0) agents[agentId] = rest;
      else delete agents[agentId];
      const { agents: _old, approvalWindowSeconds, ...wide } = current;
      const next = {
        ...wide,
        // The view shows the window as a plain number; the schema reads an exact literal.
        ...(approvalWindowSeconds !== undefined ? { approvalWindowSeconds: new LosslessNumber(String(approvalWindowSeconds)) } : {}),
        ...(Object.keys(agents).length > 0 ? { agents } : {}),
      };
      await runFor(userPutPolicyOperation, payerOf(session), { body: next });
    } catch (error) {
      const { status, message } = refusal(error);
      // An agent id that is no registered agent: the API's policy refuses to name it (400).
      return render(session, req.baseUrl, undefined, { status, message });
    }
    return { kind: 'redirect', location: `${LIMITS}?done=${blocked ? 'blocked' : 'unblocked'}` };
  };
}

export const LIMITS_ROUTES: readonly ConsoleRoute[] = [
  { method: 'GET', path: LIMITS, page: limitsPage },
  { method: 'POST', path: LIMITS, page: saveLimits },
  { method: 'POST', path: `${LIMITS}/agents/:id/block`, page: setBlocked(true) },
  { method: 'POST', path: `${LIMITS}/agents/:id/unblock`, page: setBlocked(false) },
];
