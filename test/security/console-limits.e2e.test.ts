/**
 * The console's limits (DESIGN §21, docs/console.md "Security"), in a file of their own: they
 * block this machine's address (the local adapter's socket address) for the rest of the window,
 * and each test file has its own table, so its own counters.
 */
import { startConsoleStack } from '../browser/console';
import { auditAfterAll } from '../support/audit';
import { softAuthenticator } from '../support/authenticator';
import { consoleClient, type JsonAnswer } from '../support/console-http';
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

const post = (path: string, form: Record<string, string>) =>
  fetch(`${t.base}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: t.base },
    body: new URLSearchParams(form).toString(),
  });

describe('console limits', () => {
  it('answers 401 `invalid account key` to a wrong key, and 429 after 10 failures in a minute, even to the right key', async () => {
    const user = await t.fundedUser();
    // Its own address for this test's window (the local adapter gives the socket's; x-forwarded-for is not read).
    for (let i = 0; i < 10; i++) {
      const res = await post('/console/login', { accountKey: `uk_live_wrong${i}` });
      expect(res.status).toBe(401);
      expect(await res.text()).toContain('invalid account key');
    }
    const blocked = await post('/console/login', { accountKey: user.key });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(blocked.headers.getSetCookie()).toEqual([]);
    const passkey = await fetch(`${t.base}/console/login/options`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: t.base },
      body: '{}',
    });
    expect(passkey.status).toBe(429);
  });

  it('limits sign-ups from one address: the 11th in an hour is 429', async () => {
    // A sign-up counts when it completes (asking for its options writes nothing, DESIGN §24).
    const c = consoleClient(t.base);
    const start = () => c.postJson('/console/signup/options', { name: 'x' });
    const finish = (options: JsonAnswer) =>
      c.postJson('/console/signup/verify', { response: softAuthenticator('localhost', t.base).register(String(options.body.challenge)) });
    // Options asked for before the limit was reached, answered after it.
    const early = await start();
    for (let i = 0; i < 10; i++) expect((await finish(await start())).status).toBe(200);
    const late = await start();
    expect([late.status, late.body.error]).toEqual([429, 'too many sign-ups from this address, try again later']);
    const eleventh = await finish(early);
    expect([eleventh.status, eleventh.setCookies]).toEqual([429, []]);
  });
});
