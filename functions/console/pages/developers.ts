/**
 * Developers (DESIGN §15, §16, §21): the account key (rotate it: the new one shown once, the old
 * one dead at once — and, as the API's rotation does, every grant revoked and every webhook
 * endpoint deleted, which the page says before the button) and the payer's webhook endpoints
 * (add one: its signing secret shown once; delete; recent deliveries; a test event). The actions
 * run the API's own operations (runFor) for the caller the session stands for: the payer under the
 * account key that opened it (functions/operations/webhooks.ts).
 */

import { StoredReply } from '../../contracts/api';
import { createWebhookSchema } from '../../contracts/request.schemas';
import { validate } from '../../contracts/validation';
import type { CreatedWebhook } from '../../contracts/webhook-outcome';
import { EVENT_TYPES_BY_OWNER } from '../../core/events';
import { html, type SafeHtml } from '../../http/html';
import { runFor } from '../../operations/execute';
import { userRotateKeyJoining } from '../../operations/payers';
import { userWebhooksCreateJoining, userWebhooksDeleteOperation, userWebhooksTestOperation } from '../../operations/webhooks';
import { deliveryView, listOwnerWebhooks, listWebhookDeliveries, webhookView } from '../../use-cases/events/webhooks';
import type { RotatedAccountKey } from '../../use-cases/identity/account-key';
import { actingAccountKeyHash } from '../../use-cases/identity/console-forms';
import { copyButton } from '../copy';
import type { ConsolePage, ConsoleResult, ConsoleRoute, ConsoleSession } from '../page';
import { once } from './once';
import {
  csrfField,
  errorBox,
  FormCheck,
  type FormProblems,
  formField,
  notFound,
  onceField,
  page,
  problemSummary,
  refusal,
  tableRegion,
  when,
  zoneNote,
} from './ui';

type WebhookView = ReturnType<typeof webhookView>;
type DeliveryView = ReturnType<typeof deliveryView>;

const DEVELOPERS = '/console/developers';
const WEBHOOKS = `${DEVELOPERS}/webhooks`;
const RECENT_DELIVERIES = 25;
const LABELS = { url: 'Endpoint URL', events: 'Events' };

const NOTICES: Readonly<Record<string, string>> = {
  deleted: 'Endpoint deleted: it receives no more events.',
  ping: 'Test event queued: it shows below once it is delivered (reload the page).',
};

const developersPage: ConsolePage = async (session, req) => render(session, NOTICES[req.query.done ?? '']);

async function render(session: ConsoleSession, notice?: string, refused?: { problems: FormProblems; url: string }): Promise<ConsoleResult> {
  const webhooks = (await listOwnerWebhooks({ kind: 'user', id: session.userId })).map(webhookView);
  const body = html`
${notice ? html`<p class="notice" role="status">${notice}</p>` : html``}
<section aria-labelledby="key-h">
<h2 id="key-h">Account key</h2>
<p>Your account key (<code>uk_live_…</code>) lets your own scripts use the payer API. Never give it to an agent: give agents a grant instead.</p>
<p>Rotate it if it may have leaked. The new key is shown once and the old one stops working at once. <strong>Rotating also revokes every grant you gave and deletes every webhook endpoint below</strong>, because whoever held the old key could have made them. You can then create them again.</p>
<p>It also <strong>signs you out everywhere</strong>, this browser included, and removes every passkey that was added after signing in with the account key (whoever held the key could have added them). Passkeys you added while signed in with a passkey stay.</p>
<p><a class="button danger" href="${DEVELOPERS}/rotate">Rotate account key</a></p>
</section>
<section aria-labelledby="hooks-h">
<h2 id="hooks-h">Webhook endpoints</h2>
<p>We send signed events (Standard Webhooks) to these URLs: ${EVENT_TYPES_BY_OWNER.user.join(', ')}.</p>
${webhooks.length === 0 ? html`<p class="empty">No endpoints yet. Add the URL of a server of yours below to hear about approvals, charges and top-ups as they happen.</p>` : webhookList(session, webhooks)}
<form method="post" action="${WEBHOOKS}" aria-labelledby="add-h" novalidate>
<h3 id="add-h">Add an endpoint</h3>
${csrfField(session)}${onceField()}
${problemSummary(refused?.problems, { url: 'w-url' })}
${formField({
  id: 'w-url',
  name: 'url',
  label: 'Endpoint URL',
  type: 'url',
  hint: 'An https URL on the public internet, for example https://example.com/hooks/payments.',
  value: refused?.url ?? '',
  problem: refused?.problems.fields.url,
  attrs: html`inputmode="url" autocomplete="off" spellcheck="false" required`,
})}
<button type="submit">Add endpoint</button>
</form>
</section>
${zoneNote(session)}`;
  return page('Developers', 'developers', body, refused?.problems.status ?? 200);
}

function webhookList(session: ConsoleSession, webhooks: readonly WebhookView[]): SafeHtml {
  return html`<ul class="cards">${webhooks.map(
    (w) => html`<li class="card">
<p class="mono wrap">${w.url}</p>
<p class="muted">Added ${when(w.createdAt, session)} · ${w.events.length} event types</p>
<p class="actions">
<a href="${WEBHOOKS}/${w.id}">Recent deliveries<span class="visually-hidden"> to ${w.url}</span></a>
</p>
<form method="post" action="${WEBHOOKS}/${w.id}/delete">${csrfField(session)}
<button type="submit" class="danger" aria-describedby="${w.id}-url">Delete</button><span class="visually-hidden" id="${w.id}-url">the endpoint ${w.url}</span>
</form>
</li>`,
  )}</ul>`;
}

/** POST /console/developers/rotate: a new account key once per form key, shown in this answer only. */
const rotate: ConsolePage = async (session, req) => {
  try {
    const done = await once<RotatedAccountKey, { rotated: true }>(session, 'rotate-key', req.form, {}, async (record) => {
      // A key-opened session rotates the key that opened it, never a newer one (DESIGN §24).
      const oldKeyHash = await actingAccountKeyHash(session.userId, session.accountKeyHash);
      if (!oldKeyHash) throw new Error('a payer without an account key cannot rotate it');
      const rotated = await runFor(
        userRotateKeyJoining([record({ rotated: true })]),
        { userId: session.userId, userKeyHash: oldKeyHash },
        {},
      );
      if (rotated instanceof StoredReply) throw new Error('a rotation answered a stored reply');
      return rotated;
    });
    if (done.replayed) {
      return page(
        'Account key already rotated',
        'developers',
        html`<p>This form was already submitted and your account key was rotated then. The new key was shown once, in the answer to that first submit.</p>
<p>If you did not copy it, rotate again: <a href="${DEVELOPERS}">back to Developers</a>.</p>`,
      );
    }
    const { userKey, revokedGrants, deletedWebhooks, endedSessions, removedPasskeys } = done.value;
    return page(
      'New account key',
      'developers',
      html`
<p>Your old account key no longer works. Here is the new one. <strong>It is shown only this once</strong>: we keep only a fingerprint of it, so copy it now.</p>
<div class="field secret">
<label for="account-key">Account key</label>
<textarea id="account-key" readonly rows="3" spellcheck="false" autocomplete="off">${userKey}</textarea>
${copyButton('account-key', 'the account key')}
</div>
<p>${revokedGrants.length === 1 ? '1 grant was' : `${revokedGrants.length} grants were`} revoked and ${deletedWebhooks.length === 1 ? '1 webhook endpoint was' : `${deletedWebhooks.length} webhook endpoints were`} deleted.</p>
${
  revokedGrants.length > 0
    ? html`<ul>${revokedGrants.map((g) => html`<li>Grant for ${g.agent.name} in ${g.currency} (${g.id})</li>`)}</ul>`
    : html``
}
${deletedWebhooks.length > 0 ? html`<ul>${deletedWebhooks.map((w) => html`<li class="mono wrap">${w.url}</li>`)}</ul>` : html``}
<p>${endedSessions === 1 ? '1 session was' : `${endedSessions} sessions were`} signed out, this one included, and ${removedPasskeys.length === 1 ? '1 passkey added with the account key was' : `${removedPasskeys.length} passkeys added with the account key were`} removed.</p>
${removedPasskeys.length > 0 ? html`<ul>${removedPasskeys.map((name) => html`<li>${name}</li>`)}</ul>` : html``}
<p>Copy the key, then <a href="/console/login">sign in again</a> with it or with a passkey of yours.</p>`,
    );
  } catch (error) {
    const { status, message } = refusal(error);
    const shown = await render(session);
    return shown.kind === 'page' ? { ...shown, status, body: html`${errorBox(message)}${shown.body}` } : shown;
  }
};

/**
 * POST /console/developers/webhooks: the endpoint once per form key (the form's record joins the
 * endpoint's own write: the API's creation, run for the session's payer); its signing secret shown
 * in this answer only.
 */
const addWebhook: ConsolePage = async (session, req) => {
  const url = (req.form.url ?? '').trim();
  const check = new FormCheck(req.form, { labels: LABELS });
  try {
    validate(createWebhookSchema, { url });
    const userKeyHash = await actingAccountKeyHash(session.userId, session.accountKeyHash);
    if (!userKeyHash) throw new Error('a payer without an account key cannot add webhook endpoints');
    const done = await once<CreatedWebhook, { webhookId: string }>(session, 'webhook', req.form, { url }, async (record) => {
      const create = userWebhooksCreateJoining((webhook) => [record({ webhookId: webhook.id })]);
      const outcome = await runFor(create, { userId: session.userId, userKeyHash }, { body: { url } });
      // No Idempotency-Key: never an earlier answer.
      if (outcome instanceof StoredReply) throw new Error('a webhook created without a key answered a stored reply');
      return outcome;
    });
    if (done.replayed) {
      return page(
        'Endpoint already added',
        'developers',
        html`<p>This form was already submitted and the endpoint was added then. Its signing secret was shown once, in the answer to that first submit.</p>
<p>If you did not copy it, delete the endpoint and add it again: <a href="${DEVELOPERS}">back to Developers</a>.</p>`,
      );
    }
    const { webhook, secret } = done.value;
    return page(
      'Endpoint added',
      'developers',
      html`
<p>We will send events to <span class="mono wrap">${webhook.url}</span>, signed with this secret. <strong>It is shown only this once</strong>: copy it into your server's configuration now.</p>
<div class="field secret">
<label for="webhook-secret">Signing secret</label>
<textarea id="webhook-secret" readonly rows="3" spellcheck="false" autocomplete="off">${secret}</textarea>
${copyButton('webhook-secret', 'the signing secret')}
</div>
<p class="hint">Verify each delivery's <code>webhook-signature</code> header with any Standard Webhooks library and this secret.</p>
<p><a href="${DEVELOPERS}">Back to Developers</a></p>`,
    );
  } catch (error) {
    return render(session, undefined, { problems: check.refused(error), url });
  }
};

const ownerOf = (session: ConsoleSession) => ({ kind: 'user' as const, id: session.userId });
/**
 * The caller the session stands for: the payer under the account key that opened it (DESIGN §24);
 * deleting and testing an endpoint read only the payer, so a payer without an account key still can.
 */
const callerOf = async (session: ConsoleSession) => ({
  userId: session.userId,
  userKeyHash: (await actingAccountKeyHash(session.userId, session.accountKeyHash)) ?? '',
});
const endpointNotFound = () => notFound('developers', 'Webhook endpoint', { href: DEVELOPERS, label: 'Back to Developers' });

/** POST /console/developers/webhooks/:id/delete: 404 for an id that is not one of this payer's endpoints. */
const deleteWebhook: ConsolePage = async (session, req) => {
  try {
    await runFor(userWebhooksDeleteOperation, await callerOf(session), { params: { id: req.params.id } });
  } catch (error) {
    if (refusal(error).status === 404) return endpointNotFound();
    throw error;
  }
  return { kind: 'redirect', location: `${DEVELOPERS}?done=deleted` };
};

/** GET /console/developers/webhooks/:id: the endpoint's recent delivery attempts. */
const deliveriesPage: ConsolePage = async (session, req) => {
  let deliveries: DeliveryView[];
  let webhook: WebhookView | undefined;
  try {
    deliveries = (await listWebhookDeliveries(ownerOf(session), req.params.id, { limit: RECENT_DELIVERIES })).map(deliveryView);
    const found = (await listOwnerWebhooks(ownerOf(session))).find((w) => w.id === req.params.id);
    webhook = found && webhookView(found);
  } catch (error) {
    if (refusal(error).status === 404) return endpointNotFound();
    throw error;
  }
  if (!webhook) return endpointNotFound();
  const rows = deliveries.map(
    (d) => html`<tr>
<td data-label="Time">${when(d.createdAt, session)}</td>
<td data-label="Event" class="mono">${d.type}</td>
<td data-label="Attempt">${d.attempt}</td>
<td data-label="Result"><span class="status status-${d.status === 'succeeded' ? 'success' : d.status === 'dead' ? 'failed' : 'pending'}">${d.status}</span></td>
<td data-label="HTTP status">${d.statusCode ?? '—'}</td>
<td data-label="Error" class="wrap">${d.error ?? ''}${d.nextAttemptAt ? html` <span class="muted">(next try ${when(d.nextAttemptAt, session)})</span>` : html``}</td>
</tr>`,
  );
  return page(
    'Recent deliveries',
    'developers',
    html`
${NOTICES[req.query.done ?? ''] ? html`<p class="notice" role="status">${NOTICES[req.query.done ?? '']}</p>` : html``}
<p>To <span class="mono wrap">${webhook.url}</span></p>
${
  deliveries.length === 0
    ? html`<p class="empty">No deliveries yet. Events are sent as they happen; send a test event to check your endpoint now.</p>`
    : tableRegion(
        'Recent deliveries',
        html`<table><thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Attempt</th><th scope="col">Result</th><th scope="col">HTTP status</th><th scope="col">Error</th></tr></thead><tbody>${rows}</tbody></table>`,
      )
}
<form method="post" action="${WEBHOOKS}/${webhook.id}/test">${csrfField(session)}<button type="submit" class="secondary">Send test event</button></form>
${zoneNote(session)}
<p><a href="${DEVELOPERS}">Back to Developers</a></p>`,
  );
};

/** POST /console/developers/webhooks/:id/test: a `ping` to this one endpoint (rate limited like the API's). */
const testWebhook: ConsolePage = async (session, req) => {
  try {
    await runFor(userWebhooksTestOperation, await callerOf(session), { params: { id: req.params.id } });
  } catch (error) {
    const { status, message } = refusal(error);
    if (status === 404) return endpointNotFound();
    return page(
      'Recent deliveries',
      'developers',
      html`${errorBox(message)}<p><a href="${WEBHOOKS}/${req.params.id ?? ''}">Back to the endpoint</a></p>`,
      status,
    );
  }
  return { kind: 'redirect', location: `${WEBHOOKS}/${encodeURIComponent(req.params.id ?? '')}?done=ping` };
};

export const DEVELOPERS_ROUTES: readonly ConsoleRoute[] = [
  { method: 'GET', path: DEVELOPERS, page: developersPage },
  { method: 'POST', path: `${DEVELOPERS}/rotate`, page: rotate },
  { method: 'POST', path: WEBHOOKS, page: addWebhook },
  { method: 'GET', path: `${WEBHOOKS}/:id`, page: deliveriesPage },
  { method: 'POST', path: `${WEBHOOKS}/:id/delete`, page: deleteWebhook },
  { method: 'POST', path: `${WEBHOOKS}/:id/test`, page: testWebhook },
];
