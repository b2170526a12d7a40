/**
 * Red team, issue 38 (DESIGN §24): a console session opened with a leaked account key must decide
 * nothing once that key is rotated away — on the consent page too, which lives outside the console
 * (functions/api/consent-decide.handler.ts) and reads sessions with its own code.
 *
 * A rotation ends every session eagerly; this test plays the race that sweep can lose: the key is
 * replaced (store `rotateUserKey`, the rotation's own write) while the attacker's key-opened session
 * is still stored. The attacker's agent has asked for a grant; the attacker allows it from the
 * signed-in consent form (the session's CSRF token, the console's Origin): 403, the request stays
 * pending, no grant. The same stale session's `Rotate account key` form is refused and the session
 * ends (the new key still signs in). The payer, signed in with the new key, allows it: 303, so the
 * refusal is the stale session's alone.
 */
import { generateKey, hashKey, USER_KEY_PREFIX } from '../../functions/core/keys';
import { rotateUserKey } from '../../functions/store/identity/user.repository';
import { startConsoleStack } from '../browser/console';
import { auditAfterAll } from '../support/audit';
import { consoleClient, formKeyOf, type Signed } from '../support/console-http';
import type { TestStack } from '../support/stack';
import { createTestTable } from '../support/table';

let t: TestStack & { base: string };
beforeAll(async () => {
  await createTestTable();
  t = await startConsoleStack();
});
afterAll(async () => {
  await t?.stack.stop();
});
auditAfterAll();

type GrantRequest = { id: string; status: string; consentUrl: string };

describe('a key-opened session outliving its key', () => {
  it('decides no consent and submits no console form; the payer with the new key can', async () => {
    const c = consoleClient(t.base);
    const payer = await t.fundedUser({ USD: 10 });
    const agent = await t.enabledAgent();
    const asked = await t.call<GrantRequest>('POST', '/api/v1/agents/grant-requests', {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': `stale-${process.pid}-${Date.now()}` },
      body: { currency: 'USD', limits: { total: 10 } },
    });
    expect(asked.status).toBe(201);
    const consentPath = new URL(asked.body.consentUrl).pathname;
    const decide = (signed: Signed) =>
      fetch(`${t.stack.url}${consentPath}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: t.base, cookie: signed.cookie },
        body: new URLSearchParams({ action: 'allow', csrf: signed.csrf }).toString(),
      });
    const status = async () =>
      (await t.call<GrantRequest>('GET', `/api/v1/agents/grant-requests/${asked.body.id}`, { headers: { 'x-agent-key': agent.key } })).body
        .status;

    // The attacker signs in with the leaked key; the payer's rotation replaces it, the session still stored.
    const stale = await c.signInWithKey(payer.key);
    if (!stale) throw new Error('no session');
    const newKey = generateKey(USER_KEY_PREFIX);
    await rotateUserKey(payer.id, hashKey(payer.key), hashKey(newKey));

    const refused = await decide(stale);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('this form has expired or came from another site');
    expect(await status()).toBe('pending');

    // The attacker's next move, rotating the key to lock the payer out: sent to sign in, the session ended.
    const form = await c.postForm(
      '/console/developers/rotate',
      // The form is on the rotation's confirmation page (DESIGN §26), a link from Developers.
      { idempotencyKey: formKeyOf(await (await c.get('/console/developers/rotate', stale)).text(), '/console/developers/rotate') },
      stale,
    );
    expect([form.status, form.headers.get('location')]).toEqual([303, '/console/login']);
    expect(await c.signedIn(stale)).toBe(false);

    // The payer, with the new key, allows it from the same form.
    const fresh = await c.signInWithKey(newKey);
    if (!fresh) throw new Error('no session with the new key');
    expect((await decide(fresh)).status).toBe(303);
    // (The agent's first read after the approval takes the key: `claimed`.)
    expect(await status()).toBe('claimed');
  });
});
