/**
 * `/console/security` Security (DESIGN §21): the payer's passkeys (add another, remove one — never
 * the last while the payer has not signed in with the account key) and `Sign out everywhere`.
 * Adding a passkey is a ceremony of the passkey script (the framework's JSON routes); removing is a form.
 */
import { isRefusal } from '../../messages/refusal';
import { html } from '../../pages/html';
import { passkeysOf, removePasskey } from '../../use-cases/passkeys';
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
<p><strong>Passkey ${i + 1}</strong> <span class="muted">added ${when(p.createdAt, session)}</span></p>
<form class="inline" method="post" action="/console/security/passkeys/${encodeURIComponent(p.credentialId)}/remove">${csrfField(session.csrfToken)}<button type="submit" class="danger" aria-label="Remove passkey ${i + 1}">Remove</button></form>
</li>`,
)}
</ul>
${zoneNote(session)}`
}
${passkeys.length === 1 && accountKeySignInAt === undefined && html`<p class="muted">Your only passkey can be removed once you have another one, or once you have signed in with your account key.</p>`}
<form>${csrfField(session.csrfToken)}<button type="button" id="passkey-add" class="primary">Add a passkey</button></form>
</section>
<section aria-labelledby="sessions"><h2 id="sessions">Sessions</h2>
<p>Signs out this browser and every other one signed in to your account.</p>
<form method="post" action="/console/security/sign-out-everywhere">${csrfField(session.csrfToken)}<button type="submit">Sign out everywhere</button></form>
</section>`;
  return { kind: 'page', title: 'Security', nav: 'security', body, ...(refused ? { status: refused.status } : {}) };
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

export const SECURITY_ROUTES: readonly ConsoleRoute[] = [
  { method: 'GET', path: '/console/security', page: securityPage },
  { method: 'POST', path: '/console/security/passkeys/:id/remove', page: remove },
];
