/**
 * Red team, issue 38 (DESIGN §24): the stateless WebAuthn challenges carry their purpose, and for
 * the signed-in ceremonies the payer and the session (use-cases/identity/webauthn-challenge.ts). An attacker
 * who can sign in somewhere (their own account, or a victim's with a leaked key) tries to add a
 * passkey without the fresh proof by answering a challenge made for something else:
 * - a sign-up or a sign-in challenge (anyone can have one, no proof needed) answered as the new
 *   passkey's registration, or as the proof assertion;
 * - a proof challenge of another session of the same payer, or of another payer;
 * - an add challenge (issued after a proof) of another payer's session, or of another session of
 *   the same payer;
 * - an add challenge answered twice.
 * Every one is refused with the challenge's 401 (a refusal before the challenge is spent writes
 * nothing, so the session it was made for can still finish), and only proven passkeys are added.
 */
import { listPasskeys } from '../../functions/store/identity/passkey.repository';
import { startConsoleStack } from '../browser/console';
import { auditAfterAll } from '../support/audit';
import { softAuthenticator } from '../support/authenticator';
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

const GONE = [401, 'this passkey request has expired or was already used, try again'];

describe('a WebAuthn challenge answers only the ceremony, payer and session it was made for', () => {
  it('refuses sign-up, sign-in, other sessions’ and other payers’ challenges when adding a passkey; only proven passkeys are added', async () => {
    const c = consoleClient(t.base);
    const device = () => softAuthenticator('localhost', t.base);
    const count = async (userId: string) => (await listPasskeys(userId)).passkeys.length;

    // Two payers, each with a passkey of their own (added with the key typed again), each signed in with it twice.
    const victim = await t.fundedUser();
    const attacker = await t.fundedUser();
    const victimKey = await c.signInWithKey(victim.key);
    const attackerKey = await c.signInWithKey(attacker.key);
    if (!victimKey || !attackerKey) throw new Error('no session');
    const victimDevice = device();
    const attackerDevice = device();
    expect((await c.addPasskey(victimKey, victimDevice, { accountKey: victim.key }, 'Victim phone')).status).toBe(200);
    expect((await c.addPasskey(attackerKey, attackerDevice, { accountKey: attacker.key }, 'Attacker phone')).status).toBe(200);
    const victimS1 = await c.signInWithPasskey(victimDevice);
    const victimS2 = await c.signInWithPasskey(victimDevice);
    const attackerS = await c.signInWithPasskey(attackerDevice);
    if (!victimS1 || !victimS2 || !attackerS) throw new Error('no passkey session');
    const before = { victim: await count(victim.id), attacker: await count(attacker.id) };

    const verify = (signed: Signed, challenge: string, by = device()) =>
      c.postJson('/console/security/passkeys/verify', { response: by.register(challenge) }, signed);
    const options = (signed: Signed, proof: Record<string, unknown>) =>
      c.postJson('/console/security/passkeys/options', { ...proof, name: 'Planted' }, signed);
    const proofChallenge = async (signed: Signed) => {
      const ask = await c.postJson('/console/security/passkeys/proof', {}, signed);
      expect(ask.status).toBe(200);
      return String(ask.body.challenge);
    };
    const refused = (res: { status: number; body: Record<string, unknown> }) => expect([res.status, res.body.error]).toEqual(GONE);

    // 1. A sign-up challenge (anyone gets one) answered as an added passkey's registration: in a key session and a passkey session.
    const signUp = String((await c.postJson('/console/signup/options', { name: 'x' })).body.challenge);
    refused(await verify(attackerKey, signUp));
    const signUp2 = String((await c.postJson('/console/signup/options', { name: 'x' })).body.challenge);
    refused(await verify(victimS1, signUp2));

    // 2. A sign-in challenge answered as the registration, and as the proof assertion.
    const login = String((await c.postJson('/console/login/options', {})).body.challenge);
    refused(await verify(victimS1, login));
    const login2 = String((await c.postJson('/console/login/options', {})).body.challenge);
    refused(await options(victimS1, { assertion: victimDevice.assert(login2) }));

    // 3. A proof challenge made for another session of the same payer, and for another payer's session.
    const ofS2 = await proofChallenge(victimS2);
    refused(await options(victimS1, { assertion: victimDevice.assert(ofS2) }));
    const ofAttacker = await proofChallenge(attackerS);
    // The attacker's own passkey asserting over its own proof challenge, sent in the victim's session (a CSRF-less replay).
    refused(await options(victimS1, { assertion: attackerDevice.assert(ofAttacker) }));

    // 4. An add challenge (issued after a good proof) of the attacker's session, answered in the victim's;
    //    one of the victim's session S2, answered in S1; and one answered twice.
    const attackerAdd = await options(attackerS, { assertion: attackerDevice.assert(await proofChallenge(attackerS)) });
    expect(attackerAdd.status).toBe(200);
    refused(await verify(victimS1, String(attackerAdd.body.challenge)));
    const s2Add = await options(victimS2, { assertion: victimDevice.assert(await proofChallenge(victimS2)) });
    expect(s2Add.status).toBe(200);
    refused(await verify(victimS1, String(s2Add.body.challenge)));
    // A refusal for the wrong session spends nothing (it writes nothing): the session it was made for still may, once.
    expect((await verify(victimS2, String(s2Add.body.challenge))).status).toBe(200);
    refused(await verify(victimS2, String(s2Add.body.challenge)));
    const keyAdd = await options(attackerKey, { accountKey: attacker.key });
    expect(keyAdd.status).toBe(200);
    expect((await verify(attackerKey, String(keyAdd.body.challenge))).status).toBe(200);
    refused(await verify(attackerKey, String(keyAdd.body.challenge)));

    // Each payer has exactly the one passkey its own proof paid for.
    expect(await count(victim.id)).toBe(before.victim + 1);
    expect(await count(attacker.id)).toBe(before.attacker + 1);
  });
});
