/**
 * `/console/security` Security (DESIGN §21, §24): the payer's passkeys — each with its name, when and
 * how it was added (at sign-up, with the account key, or with which passkey) and whether rotating
 * the account key removes it — add another (with a fresh proof: the account key typed again in a
 * session the key opened, a passkey's confirmation in a passkey session), remove one (never the
 * last while the payer has not signed in with the account key; its sessions end), the live sessions
 * (started, opened by which passkey or the account key, last seen) each with `End`, and `Sign out
 * everywhere`. Adding a passkey is a ceremony of the passkey script (the framework's JSON routes);
 * its name field is filled with the browser's label (`Chrome on Mac`), which the payer may change.
 * `Remove` and `Sign out everywhere` ask first (DESIGN §26): each is a link to a page that says what
 * will end, whose form posts the action (CSRF-checked as every console form; `Cancel` goes back).
 * `End` acts at once: it ends one session, which signs in again with a passkey or the key.
 */

import type { ListedPasskey } from '../../core/passkeys';
import { html, type SafeHtml } from '../../http/html';
import { isRefusal } from '../../messages/refusal';
import { endMySession, type ListedSession, listMySessions } from '../../use-cases/identity/console-sessions';
import { PASSKEY_NAME_MAX, passkeysOf, removePasskey } from '../../use-cases/identity/passkeys';
import { deviceLabel } from '../device';
import { when, zoneNote } from '../format';
import { csrfField } from '../layout';
import type { ConsolePage, ConsoleRequest, ConsoleResult, ConsoleRoute, ConsoleSession } from '../page';
import { notFound } from '../pages/ui';

const NOTICES: Readonly<Record<string, string>> = {
  added: 'Passkey added.',
  removed: 'Passkey removed.',
  ended: 'Session ended: that browser is signed out.',
};

const SECURITY = '/console/security';

async function render(session: ConsoleSession, req: ConsoleRequest, refused?: { status: number; message: string }): Promise<ConsoleResult> {
  const [{ passkeys, accountKeySignInAt }, sessions] = await Promise.all([
    passkeysOf(session.userId),
    listMySessions({ userId: session.userId, hash: req.sessionHash ?? '' }, req.now, req.currentSession),
  ]);
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
<p><a class="button danger" href="${SECURITY}/passkeys/${encodeURIComponent(p.credentialId)}/remove" aria-label="Remove passkey ${i + 1}: ${p.name ?? `Passkey ${i + 1}`}">Remove</a></p>
</li>`,
)}
</ul>
${zoneNote(session)}`
}
${passkeys.length === 1 && accountKeySignInAt === undefined && html`<p class="muted">Your only passkey can be removed once you have another one, or once you have signed in with your account key.</p>`}
<form id="passkey-add-form" method="post" action="/console/security/passkeys/add" aria-labelledby="add-passkey">${csrfField(session.csrfToken)}
<h3 id="add-passkey">Add a passkey</h3>
<div class="field"><label for="passkey-name">Passkey name</label>
<input id="passkey-name" name="name" type="text" maxlength="${String(PASSKEY_NAME_MAX)}" autocomplete="off" value="${deviceLabel(req.userAgent) ?? ''}" aria-describedby="passkey-name-hint">
<p id="passkey-name-hint" class="muted">How this passkey is listed here and on your sessions: the device it is on, for example. Filled in with this browser's; change it if you like.</p></div>
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
<p>Where your account is signed in now. A session ends after 30 minutes without use, 12 hours after it started, or when you end it here. Last seen is updated at most every 5 minutes.</p>
<ul class="sessions">
${sessions.map((s, i) => sessionItem(session, s, i, passkeys))}
</ul>
${passkeys.length === 0 ? zoneNote(session) : html``}
<p>Sign out everywhere signs out this browser and every other one. Rotating your account key (on Developers) does this too.</p>
<p><a class="button" href="${SECURITY}/sign-out-everywhere">Sign out everywhere</a></p>
</section>`;
  return { kind: 'page', title: 'Security', nav: 'security', body, ...(refused ? { status: refused.status } : {}) };
}

/** How a session was opened: the passkey's name, or the account key. */
function openedWith(s: Pick<ListedSession, 'openedBy'>, passkeys: readonly ListedPasskey[]): string {
  if (s.openedBy.kind === 'accountKey') return 'account key';
  const { credentialId } = s.openedBy;
  const index = passkeys.findIndex((p) => p.credentialId === credentialId);
  return index < 0 ? 'a passkey' : `passkey ${passkeys[index]?.name ?? `Passkey ${index + 1}`}`;
}

function sessionItem(session: ConsoleSession, s: ListedSession, i: number, passkeys: readonly ListedPasskey[]): SafeHtml {
  const how = openedWith(s, passkeys);
  return html`<li>
<p id="session-${s.id}"><strong>Signed in with ${how}</strong></p>
${s.current ? html`<p class="muted">This browser: ending it signs you out here.</p>` : html``}
<dl class="facts">
<dt>Started</dt><dd>${when(s.startedAt, session)}</dd>
<dt>Last seen</dt><dd>${when(s.lastSeenAt, session)}</dd>
</dl>
<form method="post" action="${SECURITY}/sessions/${s.id}/end">${csrfField(session.csrfToken)}<button type="submit" class="danger" aria-label="End session ${i + 1}${s.current ? ', this browser (signs you out)' : ''}" aria-describedby="session-${s.id}">End</button></form>
</li>`;
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

const sessionsOf = (session: ConsoleSession, req: ConsoleRequest) =>
  listMySessions({ userId: session.userId, hash: req.sessionHash ?? '' }, req.now, req.currentSession);

/** GET /console/security/passkeys/:id/remove: the passkey, the sessions it opened (which end with it), and the button. */
const confirmRemove: ConsolePage = async (session, req) => {
  const [{ passkeys, accountKeySignInAt }, sessions] = await Promise.all([passkeysOf(session.userId), sessionsOf(session, req)]);
  const index = passkeys.findIndex((p) => p.credentialId === req.params.id);
  const passkey = passkeys[index];
  if (!passkey) return notFound('security', 'Passkey', { href: SECURITY, label: 'Back to Security' });
  const name = passkey.name ?? `Passkey ${index + 1}`;
  const opened = sessions.filter((s) => s.openedBy.kind === 'passkey' && s.openedBy.credentialId === passkey.credentialId);
  const here = opened.some((s) => s.current);
  const about = html`<dl class="facts">
<dt>Passkey</dt><dd>${name}</dd>
<dt>Added</dt><dd>${when(passkey.createdAt, session)} ${howAdded(passkey)}</dd>
</dl>
${zoneNote(session)}`;
  if (passkeys.length === 1 && accountKeySignInAt === undefined) {
    return {
      kind: 'page',
      title: 'This passkey cannot be removed yet',
      nav: 'security',
      status: 409,
      body: html`${about}<p>It is your only passkey, and you have not signed in with your account key here: without it you could be left with no way in that you know works. Add another passkey, or sign in once with your account key, then remove it.</p>
<p><a href="${SECURITY}">Back to Security</a></p>`,
    };
  }
  const ends =
    opened.length === 0
      ? html`No session signed in with it is open.`
      : html`${opened.length === 1 ? 'The 1 session' : `The ${opened.length} sessions`} signed in with it end${opened.length === 1 ? 's' : ''}${here ? html`, <strong>this one included: you are signed out here</strong>` : html``}.`;
  return {
    kind: 'page',
    title: 'Remove this passkey?',
    nav: 'security',
    body: html`<p>The passkey stops signing you in at once. ${ends} The device keeps the passkey until you delete it there, but this service no longer accepts it.</p>
${about}
<form method="post" action="${SECURITY}/passkeys/${encodeURIComponent(passkey.credentialId)}/remove" class="confirm">${csrfField(session.csrfToken)}
<div class="actions"><button type="submit" class="danger">Remove passkey</button><a class="button" href="${SECURITY}">Cancel</a></div>
</form>`,
  };
};

/** GET /console/security/sign-out-everywhere: the sessions that end (this one included), and the button. */
const confirmSignOutEverywhere: ConsolePage = async (session, req) => {
  const [{ passkeys }, sessions] = await Promise.all([passkeysOf(session.userId), sessionsOf(session, req)]);
  const others = sessions.filter((s) => !s.current).length;
  return {
    kind: 'page',
    title: 'Sign out everywhere?',
    nav: 'security',
    body: html`<p>Every session of your account ends: <strong>${sessions.length === 1 ? '1 session' : `${sessions.length} sessions`}</strong>, this browser and ${others === 1 ? '1 other' : `${others} others`}. Each signs in again with a passkey or the account key. Your passkeys, grants and account key stay as they are.</p>
<ul>${sessions.map((s) => html`<li>Signed in with ${openedWith(s, passkeys)}, started ${when(s.startedAt, session)}${s.current ? ' (this browser)' : ''}</li>`)}</ul>
${zoneNote(session)}
<form method="post" action="${SECURITY}/sign-out-everywhere" class="confirm">${csrfField(session.csrfToken)}
<div class="actions"><button type="submit" class="danger">Sign out everywhere</button><a class="button" href="${SECURITY}">Cancel</a></div>
</form>`,
  };
};

/** POST /console/security/sessions/:id/end: one of the payer's sessions ends; the asking one signs this browser out. */
const endOne: ConsolePage = async (session, req) => {
  const ended = await endMySession({ userId: session.userId, hash: req.sessionHash ?? '' }, req.params.id ?? '');
  if (!ended) return notFound('security', 'Session', { href: SECURITY, label: 'Back to Security' });
  if (ended.own) return { kind: 'redirect', location: '/console/login', signedOut: true };
  return { kind: 'redirect', location: `${SECURITY}?done=ended` };
};

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
  { method: 'GET', path: '/console/security/passkeys/:id/remove', page: confirmRemove },
  { method: 'GET', path: '/console/security/sign-out-everywhere', page: confirmSignOutEverywhere },
  { method: 'POST', path: '/console/security/sessions/:id/end', page: endOne },
  { method: 'POST', path: '/console/security/passkeys/add', page: addWithoutScript },
  { method: 'POST', path: '/console/security/passkeys/:id/remove', page: remove },
];
