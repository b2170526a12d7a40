/**
 * `/console/security` Security (DESIGN §21, §24): the payer's passkeys — each with its name, when and
 * how it was added (at sign-up, with the account key, or with which passkey) and whether rotating
 * the account key removes it — add another (with a fresh proof: the account key typed again in a
 * session the key opened, a passkey's confirmation in a passkey session), remove one (never the
 * last while the payer has not signed in with the account key; its sessions end), and `Sign out
 * everywhere`. Adding a passkey is a ceremony of the passkey script (the framework's JSON routes);
 * removing is a form.
 */

import type { ListedPasskey } from '../../core/passkeys';
import { html, type SafeHtml } from '../../http/html';
import { isRefusal } from '../../messages/refusal';
import { PASSKEY_NAME_MAX, passkeysOf, removePasskey } from '../../use-cases/identity/passkeys';
import { when, zoneNote } from '../format';
import { csrfField } from '../layout';
import type { ConsolePage, ConsoleRequest, ConsoleResult, ConsoleRoute, ConsoleSession } from '../page';

const NOTICES: Readonly<Record<string, string>> = {
  added: 'Passkey added.',
  removed: 'Passkey removed.',
};

async function render(session: ConsoleSession, req: ConsoleRequest, refused?: { status: number; message: string }): Promise<ConsoleResult> {
  const { passkeys, accountKeySignInAt } = await passkeysOf(session.userId);
  const notice = NOTICES[req.query.done ?? ''];
  const body = html`${notice && html`<p class="notice" role="status">${notice}</p>`}
${refused && html`<p class="error" role="alert">${refused.message}</p>`}
<p id="passkey-error" class="error" role="alert" hidden></p>
<section aria-labelledby="passkeys"><h2 id="passkeys">Passkeys</h2>
${
  passkeys.length === 0
    ? html`<p>You have no passkey yet: you sign in with your account key. Add a passkey to sign in with this device's screen lock instead.</p>`
    : html`<ul class="items">
${passkeys.map(
  (p, i) => html`<li>
<p><strong>${p.name ?? `Passkey ${i + 1}`}</strong> <span class="muted">added ${when(p.createdAt, session)} ${howAdded(p)}</span></p>
${p.fromAccountKey ? html`<p class="muted">Rotating your account key removes it.</p>` : html``}
<form class="inline" method="post" action="/console/security/passkeys/${encodeURIComponent(p.credentialId)}/remove">${csrfField(session.csrfToken)}<button type="submit" class="danger" aria-label="Remove passkey ${i + 1}: ${p.name ?? `Passkey ${i + 1}`}">Remove</button></form>
</li>`,
)}
</ul>
${zoneNote(session)}`
}
${passkeys.length === 1 && accountKeySignInAt === undefined && html`<p class="muted">Your only passkey can be removed once you have another one, or once you have signed in with your account key.</p>`}
<form id="passkey-add-form" method="post" action="/console/security/passkeys/add" aria-labelledby="add-passkey">${csrfField(session.csrfToken)}
<h3 id="add-passkey">Add a passkey</h3>
<div class="field"><label for="passkey-name">Passkey name</label>
<input id="passkey-name" name="name" type="text" maxlength="${String(PASSKEY_NAME_MAX)}" autocomplete="off" aria-describedby="passkey-name-hint">
<p id="passkey-name-hint" class="muted">Optional: how this passkey is listed here, for example the device it is on.</p></div>
${
  session.openedBy === 'passkey'
    ? html`<p class="muted">You signed in with a passkey: confirm with one of your passkeys to add another.</p>`
    : html`<div class="field"><label for="passkey-account-key">Account key</label>
<input id="passkey-account-key" name="accountKey" type="password" autocomplete="current-password" spellcheck="false" aria-describedby="passkey-account-key-hint">
<p id="passkey-account-key-hint" class="muted">You signed in with your account key: type it again to add a passkey.</p></div>`
}
<noscript><p class="error">Adding a passkey needs JavaScript.</p></noscript>
<button type="submit" id="passkey-add" class="primary" data-proof="${session.openedBy === 'passkey' ? 'passkey' : 'accountKey'}">Add a passkey</button></form>
</section>
<section aria-labelledby="sessions"><h2 id="sessions">Sessions</h2>
<p>Signs out this browser and every other one signed in to your account. Rotating your account key (on Developers) does this too.</p>
<form method="post" action="/console/security/sign-out-everywhere">${csrfField(session.csrfToken)}<button type="submit">Sign out everywhere</button></form>
</section>`;
  return { kind: 'page', title: 'Security', nav: 'security', body, ...(refused ? { status: refused.status } : {}) };
}

/** How a passkey was added, said after its date. */
function howAdded(p: ListedPasskey): SafeHtml {
  switch (p.addedBy?.kind) {
    case 'signup':
      return html`when you signed up`;
    case 'accountKey':
      return html`with the account key`;
    case 'passkey':
      return html`with the passkey ${p.addedBy.name || 'without a name'}`;
    default:
      return html`(how is not known: added before this was recorded)`;
  }
}

export const securityPage: ConsolePage = (session, req) => render(session, req);

const remove: ConsolePage = async (session, req) => {
  try {
    await removePasskey(session.userId, req.params.id ?? '');
    return { kind: 'redirect', location: '/console/security?done=removed' };
  } catch (error) {
    if (isRefusal(error) && error.statusCode < 500) return render(session, req, { status: error.statusCode, message: error.message });
    throw error;
  }
};

/** The add form posted without the passkey script (it runs the ceremony instead): the page again, saying so. */
const addWithoutScript: ConsolePage = (session, req) =>
  render(session, req, {
    status: 400,
    message: 'Adding a passkey needs JavaScript: your browser creates the passkey. Nothing was changed.',
  });

export const SECURITY_ROUTES: readonly ConsoleRoute[] = [
  { method: 'GET', path: '/console/security', page: securityPage },
  { method: 'POST', path: '/console/security/passkeys/add', page: addWithoutScript },
  { method: 'POST', path: '/console/security/passkeys/:id/remove', page: remove },
];
