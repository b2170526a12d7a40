/**
 * The console's passkey script (DESIGN §21): the passkey ceremonies, run by @simplewebauthn/browser
 * against the console's own JSON endpoints (the time zone is console.js's, on every page). Bundled
 * by bin/console-assets.ts into functions/console/assets.generated.ts.
 */
import { browserSupportsWebAuthn, startAuthentication, startRegistration } from '@simplewebauthn/browser';

function say(text) {
  const box = document.getElementById('passkey-error');
  if (!box) return;
  box.textContent = text;
  box.hidden = false;
}

/**
 * Where the console is, its base path included (`https://api.example.com/pay` behind a CDN that
 * serves it under `/pay`): this script's own address, less `/console/assets/<file>`. Read now,
 * while the script runs (`currentScript` is empty later, in the listeners).
 */
const root = (document.currentScript?.src ?? '').replace(/\/console\/assets\/[^/]*$/, '');

async function post(path, body) {
  const res = await fetch(`${root}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
    credentials: 'same-origin',
  });
  let answer = {};
  try {
    answer = await res.json();
  } catch {
    // An answer that is not JSON: said below as the status.
  }
  if (!res.ok) throw new Error(answer.error || `the service answered ${res.status}`);
  return answer;
}

function cancelled(error) {
  return error && (error.name === 'NotAllowedError' || error.name === 'AbortError');
}

async function run(button, work) {
  button.disabled = true;
  try {
    await work();
  } catch (error) {
    say(cancelled(error) ? 'The passkey request was cancelled or timed out. Try again.' : String(error.message || error));
  } finally {
    button.disabled = false;
  }
}

const csrfOf = (element) => element.closest('form')?.querySelector('input[name="csrf"]')?.value;

const signup = document.getElementById('signup');
if (signup) {
  signup.addEventListener('submit', (event) => {
    event.preventDefault();
    const button = signup.querySelector('button');
    void run(button, async () => {
      const name = signup.querySelector('input[name="name"]')?.value ?? '';
      const optionsJSON = await post('/console/signup/options', { name });
      const response = await startRegistration({ optionsJSON });
      const done = await post('/console/signup/verify', { response });
      location.assign(done.redirect);
    });
  });
}

const signin = document.getElementById('passkey-signin');
if (signin) {
  signin.addEventListener('click', () => {
    void run(signin, async () => {
      const optionsJSON = await post('/console/login/options', {});
      const response = await startAuthentication({ optionsJSON });
      const done = await post('/console/login/verify', { response, next: signin.dataset.next ?? '' });
      location.assign(done.redirect);
    });
  });
}

const add = document.getElementById('passkey-add');
const addForm = document.getElementById('passkey-add-form');
if (add && addForm) {
  // Adding a passkey needs a fresh proof (DESIGN §24): the account key typed again in a session the
  // key opened, or a confirmation by one of the payer's passkeys in a passkey session.
  addForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void run(add, async () => {
      const csrf = csrfOf(add);
      const name = addForm.querySelector('input[name="name"]')?.value ?? '';
      const keyField = addForm.querySelector('input[name="accountKey"]');
      const proof = {};
      if (add.dataset.proof === 'passkey') {
        const proofJSON = await post('/console/security/passkeys/proof', { csrf });
        proof.assertion = await startAuthentication({ optionsJSON: proofJSON });
      } else {
        proof.accountKey = keyField?.value ?? '';
      }
      const optionsJSON = await post('/console/security/passkeys/options', { csrf, name, ...proof });
      if (keyField) keyField.value = '';
      const response = await startRegistration({ optionsJSON });
      const done = await post('/console/security/passkeys/verify', { csrf, response });
      location.assign(done.redirect);
    });
  });
}

if (!browserSupportsWebAuthn()) {
  for (const button of [signup?.querySelector('button'), signin, add]) if (button) button.disabled = true;
  if (signup || signin || add) say('This browser cannot use passkeys.');
}
