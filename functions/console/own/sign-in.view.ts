/** The signed-out pages (DESIGN §21): sign-in (passkey, or the account key) and sign-up; and the welcome page that shows the new account key once. */
import { config } from '../../config';
import { html } from '../../http/html';
import { copyButton } from '../copy';
import { consoleDocument } from '../layout';

export function loginDocument(opts: { next?: string; error?: string }): string {
  const signUpOpen = config().CONSOLE_SIGNUP === 'open';
  const body = html`${opts.error && html`<p class="error" role="alert">${opts.error}</p>`}
<p id="passkey-error" class="error" role="alert" hidden></p>
<p><button type="button" id="passkey-signin" class="primary" data-next="${opts.next ?? ''}">Sign in with a passkey</button></p>
<p class="or">Or, for an account the operator or the API made:</p>
<form method="post" action="/console/login">
${opts.next && html`<input type="hidden" name="next" value="${opts.next}">`}
<div class="field"><label for="accountKey">Account key</label>
<input id="accountKey" name="accountKey" type="password" autocomplete="current-password" spellcheck="false" required></div>
<button type="submit">Sign in with account key</button>
</form>
${signUpOpen && html`<p>New here? <a href="/console/signup">Create an account</a> with a passkey.</p>`}`;
  return consoleDocument({ title: 'Sign in', body, script: true, narrow: true });
}

export function signupDocument(): string {
  if (config().CONSOLE_SIGNUP === 'closed') {
    return consoleDocument({
      title: 'Create an account',
      body: html`<p>Sign-up is closed on this service: accounts are made by its operator. Ask them for an account key, then <a href="/console/login">sign in</a>.</p>`,
      narrow: true,
    });
  }
  const body = html`<p>Your account is a balance agents can be paid from, within limits you set. You sign in with a passkey: this device's screen lock or a security key. No password.</p>
<p id="passkey-error" class="error" role="alert" hidden></p>
<noscript><p class="error">Creating a passkey needs JavaScript.</p></noscript>
<form id="signup">
<div class="field"><label for="name">Name</label>
<input id="name" name="name" type="text" autocomplete="name" maxlength="64" aria-describedby="name-hint">
<p id="name-hint" class="muted">Optional: how your passkey is labelled on your device.</p></div>
<button type="submit" class="primary">Create account</button>
</form>
<p>Already have an account? <a href="/console/login">Sign in</a>.</p>`;
  return consoleDocument({ title: 'Create an account', body, script: true, narrow: true });
}

export function welcomeDocument(accountKey: string | undefined, csrfToken: string): string {
  const body = accountKey
    ? html`<p>Your account is ready. This is your account key; it is shown only this once:</p>
<p class="key" id="welcome-key" aria-label="Your account key">${accountKey}</p>
${copyButton('welcome-key', 'your account key')}
<p>It is for your own scripts that call the API, never for agents: give agents grants instead.</p>
<p><a class="button primary" href="/console">Continue to the console</a></p>`
    : html`<p>Your account key was shown once, when you signed up. If it is lost, rotate it on <a href="/console/developers">Developers</a>.</p>
<p><a class="button primary" href="/console">Continue to the console</a></p>`;
  return consoleDocument({ title: 'Welcome', body, narrow: true, signedIn: { csrfToken } });
}
