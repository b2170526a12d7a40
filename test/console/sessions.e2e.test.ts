/**
 * Security's sessions and the confirmations of its destructive actions (DESIGN §26), over HTTP
 * against the local stack: each live session listed with how it was opened (the passkey's name or
 * the account key), when it started and was last seen, `End` ending that one (the asking one signs
 * its browser out, cookie cleared), another payer's session id 404, `End` refused without the
 * CSRF token or from another origin; `Remove` and `Sign out everywhere` first show what ends.
 */

import { startConsoleStack } from '../browser/console';
import { auditAfterAll } from '../support/audit';
import { type SoftAuthenticator, softAuthenticator } from '../support/authenticator';
import { consoleClient, type Signed } from '../support/console-http';
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

const device = (): SoftAuthenticator => softAuthenticator('localhost', t.base);

const END = /action="\/console\/security\/sessions\/([A-Za-z0-9_-]+)\/end"/g;

/** Security's session cards: each one's id, whether it is this browser's, and its text. */
async function sessionsOn(c: ReturnType<typeof consoleClient>, signed: Signed) {
  const page = await (await c.get('/console/security', signed)).text();
  const list = page.slice(page.indexOf('<ul class="sessions">'), page.indexOf('</ul>', page.indexOf('<ul class="sessions">')));
  return list
    .split('<li>')
    .slice(1)
    .map((card) => ({ id: [...card.matchAll(END)][0]?.[1] ?? '', current: card.includes('This browser'), card }));
}

describe('Security’s sessions', () => {
  it('lists each session with how it opened and its times; End ends that one, and the asking one signs out', async () => {
    const c = consoleClient(t.base);
    const payer = await t.fundedUser({ USD: 1 });
    const here = await c.signInWithKey(payer.key);
    const there = await c.signInWithKey(payer.key);
    if (!here || !there) throw new Error('no session');

    const listed = await sessionsOn(c, here);
    expect(listed).toHaveLength(2);
    expect(listed.filter((s) => s.current)).toHaveLength(1);
    for (const s of listed) {
      expect(s.card).toContain('Signed in with account key');
      // Last seen is written at most every 5 minutes: a session seconds old was last seen when it started.
      const times = [...s.card.matchAll(/<time datetime="([^"]+)"/g)].map((m) => m[1]);
      expect(times).toHaveLength(2);
      expect(times[1]).toBe(times[0]);
    }
    const other = listed.find((s) => !s.current);
    const mine = listed.find((s) => s.current);

    // Another payer cannot end it: 404, nothing ended.
    const stranger = await c.signInWithKey((await t.fundedUser()).key);
    if (!stranger) throw new Error('no session');
    expect((await c.postForm(`/console/security/sessions/${other?.id}/end`, {}, stranger)).status).toBe(404);
    // Without the session's CSRF token, or from another site: 403, nothing ended.
    expect((await c.postForm(`/console/security/sessions/${other?.id}/end`, { csrf: 'forged' }, here)).status).toBe(403);
    const crossSite = await fetch(`${t.base}/console/security/sessions/${other?.id}/end`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example', cookie: here.cookie },
      body: new URLSearchParams({ csrf: here.csrf }).toString(),
    });
    expect(crossSite.status).toBe(403);
    expect(await c.signedIn(there)).toBe(true);

    const ended = await c.postForm(`/console/security/sessions/${other?.id}/end`, {}, here);
    expect([ended.status, ended.headers.get('location')]).toEqual([303, '/console/security?done=ended']);
    expect(await c.signedIn(there)).toBe(false);
    expect(await c.signedIn(here)).toBe(true);
    expect(await sessionsOn(c, here)).toHaveLength(1);

    const own = await c.postForm(`/console/security/sessions/${mine?.id}/end`, {}, here);
    expect([own.status, own.headers.get('location')]).toEqual([303, '/console/login']);
    expect(own.headers.getSetCookie().join()).toMatch(/console=;.*Max-Age=0/i);
    expect(await c.signedIn(here)).toBe(false);
    expect(await c.signedIn(stranger)).toBe(true);
  });

  it('names the passkey a session was opened with, and Remove says which sessions end with it', async () => {
    const c = consoleClient(t.base);
    const phone = device();
    const byPhone = await c.signUp(phone, 'Grace');
    if (!byPhone) throw new Error('no sign-up');
    const key = await c.welcomeKey(byPhone);
    const [session] = await sessionsOn(c, byPhone);
    expect(session?.card).toContain('Signed in with passkey Grace');

    const security = await (await c.get('/console/security', byPhone)).text();
    const removeHref = /href="(\/console\/security\/passkeys\/[^"]+\/remove)"/.exec(security)?.[1] ?? '';
    expect(removeHref).not.toBe('');
    // The only passkey of a payer who never signed in with the key: the page says why not, no button.
    const refused = await c.get(removeHref, byPhone);
    expect(refused.status).toBe(409);
    expect(await refused.text()).not.toContain('<form method="post" action="/console/security/passkeys');

    if (!key) throw new Error('no welcome key');
    const byKey = await c.signInWithKey(key);
    if (!byKey) throw new Error('no key session');
    const confirm = await (await c.get(removeHref, byPhone)).text();
    expect(confirm).toContain('Remove this passkey?');
    expect(confirm).toContain('The 1 session signed in with it ends, <strong>this one included');
    expect(confirm).toContain('<a class="button" href="/console/security">Cancel</a>');
    const fromKey = await (await c.get(removeHref, byKey)).text();
    expect(fromKey).toContain('The 1 session signed in with it ends.');
    // Its form posts the removal itself.
    const removed = await c.postForm(removeHref, {}, byKey);
    expect(removed.status).toBe(303);
    expect(await c.signedIn(byPhone)).toBe(false);
    expect(await c.signedIn(byKey)).toBe(true);
  });

  it('Sign out everywhere first says how many sessions end; its form ends them all', async () => {
    const c = consoleClient(t.base);
    const payer = await t.fundedUser();
    const a = await c.signInWithKey(payer.key);
    const b = await c.signInWithKey(payer.key);
    if (!a || !b) throw new Error('no session');
    const security = await (await c.get('/console/security', a)).text();
    expect(security).toContain('<a class="button" href="/console/security/sign-out-everywhere">Sign out everywhere</a>');
    const confirm = await (await c.get('/console/security/sign-out-everywhere', a)).text();
    expect(confirm).toContain('<strong>2 sessions</strong>, this browser and 1 other');
    expect(confirm).toContain('action="/console/security/sign-out-everywhere"');
    expect(await c.signedIn(b)).toBe(true);
    const out = await c.postForm('/console/security/sign-out-everywhere', {}, a);
    expect([out.status, out.headers.get('location')]).toEqual([303, '/console/login']);
    expect(await c.signedIn(a)).toBe(false);
    expect(await c.signedIn(b)).toBe(false);
  });
});
