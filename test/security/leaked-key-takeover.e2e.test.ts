/**
 * Issue 38 (DESIGN §24): a leaked account key became a lasting takeover. Reproduced end to end: the
 * attacker signed in at /console/login with the leaked key; the payer rotated the key (the
 * documented remedy), but the attacker's session lived on, created a grant for the attacker's
 * agent under the *new* key and took 40 USD; it rotated the key from the console and locked the
 * payer out; a passkey it added from that session still signed in after the operator's rotation
 * and `Sign out everywhere`.
 *
 * The attacker here has the leaked key and nothing else, and drives the console over HTTP as any
 * script can (a software authenticator makes its passkeys). Each step of the report is tried and
 * what it achieved recorded; the whole record is compared at the end, so a failure shows every
 * step the attacker still wins.
 *
 * The properties (docs/console.md "Sessions and what opened them"): a session is valid only while
 * what opened it is (the key's hash, or the passkey); a rotation ends every session of the payer
 * and removes every passkey added from a key-opened session (and those such a passkey vouched
 * for); adding a passkey needs a fresh proof and tells the payer's webhooks `user.passkey.added`.
 */
import { hashKey } from '../../functions/core/keys';
import { getUserKeyHash } from '../../functions/store/identity/user.repository';
import { resolveSession } from '../../functions/use-cases/identity/console-sessions';
import { passkeysOf } from '../../functions/use-cases/identity/passkeys';
import { startConsoleStack } from '../browser/console';
import { auditAfterAll } from '../support/audit';
import { type SoftAuthenticator, softAuthenticator } from '../support/authenticator';
import { consoleClient, formKeyOf, type Signed } from '../support/console-http';
import type { TestStack } from '../support/stack';
import { createTestTable } from '../support/table';
import { eventOf, type Receiver, startReceiver } from '../webhooks/receiver';

let t: TestStack & { base: string };
let payerRx: Receiver;
beforeAll(async () => {
  await createTestTable();
  t = await startConsoleStack({}, { webhooks: { visibilityTimeoutSeconds: 2, pollIntervalMs: 50 } });
  payerRx = await startReceiver('/payer');
});
afterAll(async () => {
  await payerRx?.stop();
  await t?.stack.stop();
});
auditAfterAll();

type Rotated = { userKey: string; endedSessions?: number; removedPasskeys?: string[] };
let n = 0;
const idem = () => `takeover-${Date.now()}-${++n}`;
const device = (): SoftAuthenticator => softAuthenticator('localhost', t.base);

describe('issue 38: a leaked account key does not become a lasting takeover', () => {
  it('replays the report end to end: every step after the payer’s rotation is refused, and the planted passkey is gone', async () => {
    const c = consoleClient(t.base);
    const payer = await t.fundedUser({ USD: 100 });
    const leaked = payer.key;
    const thiefAgent = await t.enabledAgent();
    // The payer listens to their account's events.
    const hook = await t.call('POST', '/api/v1/users/me/webhooks', { headers: { 'x-user-key': payer.key }, body: { url: payerRx.url } });
    expect(hook.status).toBe(201);
    const outcome: Record<string, unknown> = {};

    // 1. The attacker signs in with the leaked key and, before anyone notices, adds a passkey of its
    //    own (typing the leaked key again is all the proof it can give, and it has it).
    const a = await c.signInWithKey(leaked);
    outcome.attackerSignedIn = a !== undefined;
    if (!a) throw new Error('the leaked key did not sign in');
    const planted = device();
    outcome.passkeyPlanted = (await c.addPasskey(a, planted, { accountKey: leaked }, 'Backup')).status;
    const p = await c.signInWithPasskey(planted);
    outcome.plantedSignsInBeforeRotation = p !== undefined;
    // The payer hears of it.
    outcome.payerToldOfPasskey = await payerRx
      .waitFor((r) => eventOf(r).type === 'user.passkey.added', 5_000)
      .then((r) => eventOf(r).data.name)
      .catch(() => 'no event');
    // The attacker keeps the forms it will post later (each carries its one-time key).
    const grantsPage = await (await c.get('/console/grants', a)).text();
    const rotationPage = await (await c.get('/console/developers/rotate', a)).text();

    // 2. The payer rotates the key, the documented remedy.
    const rotated = await t.call<Rotated>('POST', '/api/v1/users/me/keys/rotate', { headers: { 'x-user-key': leaked } });
    outcome.payerRotation = {
      status: rotated.status,
      endedSessions: rotated.body.endedSessions,
      removedPasskeys: rotated.body.removedPasskeys,
    };
    const payerKey = rotated.body.userKey;
    const state = async (s: Signed | undefined) => (s && (await c.get('/console', s)).status === 200 ? 'signed in' : 'signed out');
    outcome.keySessionAfterRotation = await state(a);
    outcome.passkeySessionAfterRotation = await state(p);

    // 3. The attacker's session gives its agent a grant, under whatever key is current.
    const grant = await c.postForm(
      '/console/grants',
      { agentId: thiefAgent.id, currency: 'USD', total: '40', idempotencyKey: formKeyOf(grantsPage, '/console/grants') },
      a,
    );
    const grantKey = /ug_live_[A-Za-z0-9]+/.exec(await grant.text())?.[0];
    outcome.grantKeyShownToAttacker = grantKey !== undefined;

    // 4. The attacker's agent takes 40 USD with whatever it holds.
    let taken = 0;
    for (const key of [grantKey, leaked]) {
      if (!key) continue;
      const charge = await t.call('POST', '/api/v1/agents/charges', {
        headers: { 'x-agent-key': thiefAgent.key, 'x-user-key': key, 'idempotency-key': idem() },
        body: { amount: 40, currency: 'USD', description: 'takeover' },
      });
      if (charge.status === 201) taken += 40;
    }
    outcome.takenByAttackersAgent = taken;

    // 5. The attacker rotates the key from the console, locking the payer out.
    const second = await c.postForm(
      '/console/developers/rotate',
      // The form is on the rotation's confirmation page (DESIGN §26), a link from Developers.
      { idempotencyKey: formKeyOf(rotationPage, '/console/developers/rotate') },
      a,
    );
    outcome.attackerGotAKey = /uk_live_[A-Za-z0-9]+/.test(await second.text());
    outcome.payerKeyStillCurrent = (await getUserKeyHash(payer.id)) === hashKey(payerKey);

    // 6. The operator rotates for the payer (locked out in the report), who signs in with that key
    //    and signs out everywhere; the planted passkey tries again.
    const operator = await t.call<Rotated>('POST', `/api/v1/admin/users/${payer.id}/keys/rotate`, { headers: t.admin });
    outcome.operatorRotation = operator.status;
    const back = await c.signInWithKey(operator.body.userKey);
    outcome.payerSignsInAgain = back !== undefined;
    if (back) outcome.signOutEverywhere = (await c.postForm('/console/security/sign-out-everywhere', {}, back)).status;
    outcome.plantedPasskeySignsIn = (await c.signInWithPasskey(planted)) !== undefined;
    const me = await t.call<{ balances: Record<string, number> }>('GET', '/api/v1/users/me', {
      headers: { 'x-user-key': operator.body.userKey },
    });
    outcome.payerBalance = me.body.balances?.USD;

    expect(outcome).toEqual({
      attackerSignedIn: true,
      passkeyPlanted: 200,
      plantedSignsInBeforeRotation: true,
      payerToldOfPasskey: 'Backup',
      // The attacker's two sessions; the passkey it added from a key-opened session.
      payerRotation: { status: 200, endedSessions: 2, removedPasskeys: ['Backup'] },
      keySessionAfterRotation: 'signed out',
      passkeySessionAfterRotation: 'signed out',
      grantKeyShownToAttacker: false,
      takenByAttackersAgent: 0,
      attackerGotAKey: false,
      payerKeyStillCurrent: true,
      operatorRotation: 200,
      payerSignsInAgain: true,
      signOutEverywhere: 303,
      plantedPasskeySignsIn: false,
      payerBalance: 100,
    });
  });

  it('closes with the rotation the tab the leaked key opened: what was used is captured, the rest comes back, the thief meters nothing more', async () => {
    const payer = await t.fundedUser({ USD: 50 });
    const leaked = payer.key;
    const thiefAgent = await t.enabledAgent();
    type Tab = { id: string; status: string; used: number; closedBy: string | null; error?: string };
    const agentHeaders = (extra: Record<string, string> = {}) => ({ 'x-agent-key': thiefAgent.key, 'idempotency-key': idem(), ...extra });
    // The thief opens a tab on the payer's money with the leaked key and meters uses against it.
    const tab = await t.call<Tab>('POST', '/api/v1/agents/tabs', {
      headers: agentHeaders({ 'x-user-key': leaked }),
      body: { currency: 'USD', limit: 30, ttlSeconds: 86400 },
    });
    expect(tab.status).toBe(201);
    const meter = (amount: number) =>
      t.call<{ used?: number; error?: string }>('POST', `/api/v1/agents/tabs/${tab.body.id}/usage`, {
        headers: agentHeaders(),
        body: { amount },
      });
    expect((await meter(4)).status).toBe(200);
    expect((await meter(1.5)).status).toBe(200);

    // The payer rotates: the tab closes at what was used before it.
    const rotated = await t.call<Rotated>('POST', '/api/v1/users/me/keys/rotate', { headers: { 'x-user-key': leaked } });
    expect(rotated.status).toBe(200);
    const after = await meter(10);
    const read = await t.call<Tab>('GET', `/api/v1/agents/tabs/${tab.body.id}`, { headers: { 'x-agent-key': thiefAgent.key } });
    const me = await t.call<{ balances: Record<string, number>; held: Record<string, number> }>('GET', '/api/v1/users/me', {
      headers: { 'x-user-key': rotated.body.userKey },
    });
    expect({
      useAfterRotation: [after.status, after.body.error],
      tab: [read.body.status, read.body.used, read.body.closedBy],
      payer: [me.body.balances.USD, me.body.held.USD],
    }).toEqual({
      useAfterRotation: [409, 'tab is not open'],
      tab: ['CLOSED', 5.5, 'payer'],
      payer: [44.5, 0],
    });
  });

  it('removes with the rotation every passkey the account key stands behind, one such a passkey vouched for included; the payer’s own stay, their sessions end', async () => {
    const c = consoleClient(t.base);
    const mine = device();
    const s = await c.signUp(mine, 'Ada');
    if (!s) throw new Error('sign-up failed');
    const key = await c.welcomeKey(s);
    if (!key) throw new Error('no welcome key');
    // The payer adds a passkey of theirs, confirming with the one they signed up with.
    const laptop = device();
    expect((await c.addPasskey(s, laptop, { passkey: mine }, 'Laptop')).status).toBe(200);
    // The key leaks: the attacker adds a passkey with it, and from that passkey's session another.
    const a = await c.signInWithKey(key);
    if (!a) throw new Error('the key did not sign in');
    const planted = device();
    expect((await c.addPasskey(a, planted, { accountKey: key }, 'Backup')).status).toBe(200);
    const p = await c.signInWithPasskey(planted);
    if (!p) throw new Error('the planted passkey did not sign in');
    const chained = device();
    expect((await c.addPasskey(p, chained, { passkey: planted }, 'Spare')).status).toBe(200);

    // Security says when and how each was added, and which a rotation removes.
    const page = await (await c.get('/console/security', s)).text();
    const items = [
      ...page.matchAll(
        /<li>\s*<p><strong>([^<]+)<\/strong> <span class="muted">added [^<]*<time[^>]*>[^<]*<\/time>\s*([^<]*)<\/span><\/p>\s*(<p class="muted">Rotating your account key removes it\.<\/p>)?/g,
      ),
    ].map((m) => [m[1], m[2]?.trim(), m[3] !== undefined]);
    expect(items.sort()).toEqual(
      [
        ['Ada', 'when you signed up', false],
        ['Laptop', 'with the passkey Ada', false],
        ['Backup', 'with the account key', true],
        ['Spare', 'with the passkey Backup', true],
      ].sort(),
    );

    // The operator rotates (the payer is locked out, say).
    const operator = await t.call<Rotated>('POST', `/api/v1/admin/users/${(await sessionUser(s)) ?? ''}/keys/rotate`, { headers: t.admin });
    expect(operator.status).toBe(200);
    expect([operator.body.endedSessions, [...(operator.body.removedPasskeys ?? [])].sort()]).toEqual([3, ['Backup', 'Spare']]);
    expect([await c.signedIn(s), await c.signedIn(a), await c.signedIn(p)]).toEqual([false, false, false]);
    const signsIn = async (d: SoftAuthenticator) => (await c.signInWithPasskey(d)) !== undefined;
    expect({
      mine: await signsIn(mine),
      laptop: await signsIn(laptop),
      planted: await signsIn(planted),
      chained: await signsIn(chained),
    }).toEqual({ mine: true, laptop: true, planted: false, chained: false });
  });

  it('adding a passkey needs a fresh proof: the account key typed again, or an assertion made for it in this very session', async () => {
    const c = consoleClient(t.base);
    const user = await t.fundedUser();
    const other = await t.fundedUser();
    const a = await c.signInWithKey(user.key);
    if (!a) throw new Error('no session');
    const d = device();
    const refused = async (...args: Parameters<typeof c.addPasskey>) => {
      const res = await c.addPasskey(...args);
      return [res.status, res.body.error];
    };
    // A key-opened session: the key again, this payer's and the one that opened it.
    expect(await refused(a, d, {})).toEqual([400, 'to add a passkey, type your account key again']);
    expect(await refused(a, d, { accountKey: 'uk_live_wrong' })).toEqual([401, 'invalid account key']);
    expect(await refused(a, d, { accountKey: other.key })).toEqual([401, 'invalid account key']);
    expect((await c.addPasskey(a, d, { accountKey: user.key }, 'First')).status).toBe(200);

    // A passkey session: an assertion by the payer's passkey, for this purpose, in this session, once.
    const p = await c.signInWithPasskey(d);
    const q = await c.signInWithPasskey(d);
    if (!p || !q) throw new Error('no passkey session');
    const e = device();
    expect(await refused(p, e, {})).toEqual([400, 'to add a passkey, confirm with one of your passkeys first']);
    expect(await refused(p, e, { accountKey: user.key })).toEqual([400, 'to add a passkey, confirm with one of your passkeys first']);
    const gone = [401, 'this passkey request has expired or was already used, try again'];
    const withAssertion = (assertion: unknown, signed: Signed) => c.postJson('/console/security/passkeys/options', { assertion }, signed);
    // A sign-in's assertion is not one made for adding a passkey.
    const login = await c.postJson('/console/login/options', {});
    const signIn = await withAssertion(d.assert(String(login.body.challenge)), p);
    expect([signIn.status, signIn.body.error]).toEqual(gone);
    // One made in another session (even the payer's own) is not this session's.
    const forQ = await c.postJson('/console/security/passkeys/proof', {}, q);
    const elsewhere = await withAssertion(d.assert(String(forQ.body.challenge)), p);
    expect([elsewhere.status, elsewhere.body.error]).toEqual(gone);
    // Another payer's passkey cannot vouch.
    const stranger = device();
    const strangerSession = await c.signInWithKey(other.key);
    if (!strangerSession) throw new Error('no session');
    expect((await c.addPasskey(strangerSession, stranger, { accountKey: other.key })).status).toBe(200);
    const ask = await c.postJson('/console/security/passkeys/proof', {}, p);
    const byStranger = await withAssertion(stranger.assert(String(ask.body.challenge)), p);
    expect([byStranger.status, byStranger.body.error]).toEqual([401, 'this passkey was not accepted']);
    // The right one, once.
    const again = await c.postJson('/console/security/passkeys/proof', {}, p);
    const proof = d.assert(String(again.body.challenge));
    expect((await withAssertion(proof, p)).status).toBe(200);
    expect([(await withAssertion(proof, p)).status]).toEqual([401]);
    // Nothing was added but the one with its proof.
    expect((await passkeysOf(user.id)).passkeys.map((k) => k.name)).toEqual(['First']);
  });

  it('ends the sessions a passkey opened when it is removed, and no other', async () => {
    const c = consoleClient(t.base);
    const user = await t.fundedUser();
    const a = await c.signInWithKey(user.key);
    if (!a) throw new Error('no session');
    const phone = device();
    const tablet = device();
    expect((await c.addPasskey(a, phone, { accountKey: user.key }, 'Phone')).status).toBe(200);
    expect((await c.addPasskey(a, tablet, { accountKey: user.key }, 'Tablet')).status).toBe(200);
    const byPhone = [await c.signInWithPasskey(phone), await c.signInWithPasskey(phone)];
    const byTablet = await c.signInWithPasskey(tablet);
    const removed = await c.postForm(`/console/security/passkeys/${encodeURIComponent(phone.id)}/remove`, {}, byTablet);
    expect([removed.status, removed.headers.get('location')]).toEqual([303, '/console/security?done=removed']);
    expect({
      byPhone: [await c.signedIn(byPhone[0]), await c.signedIn(byPhone[1])],
      byTablet: await c.signedIn(byTablet),
      byKey: await c.signedIn(a),
    }).toEqual({ byPhone: [false, false], byTablet: true, byKey: true });
    expect(await c.signInWithPasskey(phone)).toBeUndefined();
  });
});

/** The payer of a session (the test holds the cookie; a sign-up's payer id is shown nowhere). */
async function sessionUser(s: Signed): Promise<string | undefined> {
  return (await resolveSession(/^console=(.+)$/.exec(s.cookie)?.[1], new Date()))?.userId;
}
