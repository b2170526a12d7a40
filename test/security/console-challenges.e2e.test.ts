/**
 * DESIGN §24 (low): unauthenticated requests write nothing. 200 calls of `POST
 * /console/login/options` used to leave 200 challenge items behind. A challenge is now stored
 * nowhere until a ceremony answers it: HMAC-bound to the server secret, 5 minutes, carried by the
 * page (use-cases/identity/webauthn-challenge.ts); the answer records its digest once, with a conditional
 * write, so it cannot be answered twice. Sign-up's options likewise (a sign-up is counted against
 * the address's hourly limit when it completes, not when it starts).
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { db, dynamoRequestCounts, resetDynamoRequestCounts } from '../../functions/store/client';
import { startConsoleStack } from '../browser/console';
import { auditAfterAll } from '../support/audit';
import { softAuthenticator } from '../support/authenticator';
import { consoleClient } from '../support/console-http';
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

const READS = new Set(['GetItemCommand', 'GetCommand', 'BatchGetItemCommand', 'BatchGetCommand', 'QueryCommand']);

/** Every item of the file's table, by type. */
async function itemTypes(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db().send(new ScanCommand({ TableName: config().TABLE_NAME, ExclusiveStartKey: start, ConsistentRead: true }));
    for (const item of page.Items ?? []) counts[String(item.type)] = (counts[String(item.type)] ?? 0) + 1;
    start = page.LastEvaluatedKey;
  } while (start);
  return counts;
}

/** The table requests other than reads sent while `work` ran. */
async function writesDuring(work: () => Promise<void>): Promise<Record<string, number>> {
  resetDynamoRequestCounts();
  await work();
  return Object.fromEntries(Object.entries(dynamoRequestCounts()).filter(([command]) => !READS.has(command)));
}

describe('WebAuthn challenges are stateless until answered', () => {
  it('200 sign-in options and 20 sign-up options write nothing', async () => {
    const c = consoleClient(t.base);
    const before = await itemTypes();
    const challenges = new Set<string>();
    const statuses = new Set<number>();
    const ask = async (path: string, times: number) =>
      writesDuring(async () => {
        for (let i = 0; i < times; i++) {
          const res = await c.postJson(path, path.includes('signup') ? { name: `n${i}` } : {});
          statuses.add(res.status);
          challenges.add(String(res.body.challenge));
        }
      });
    const signIn = await ask('/console/login/options', 200);
    const signUp = await ask('/console/signup/options', 20);
    const after = await itemTypes();
    const added = Object.fromEntries(Object.entries(after).filter(([type, n]) => n !== (before[type] ?? 0)));
    expect({ signIn, signUp, added, statuses: [...statuses] }).toEqual({ signIn: {}, signUp: {}, added: {}, statuses: [200] });
    // Each one different (a random nonce under the mac).
    expect(challenges.size).toBe(220);
  });

  it('refuses a replayed assertion, a tampered challenge and a challenge made for another ceremony', async () => {
    const c = consoleClient(t.base);
    const user = await t.fundedUser();
    const signed = await c.signInWithKey(user.key);
    if (!signed) throw new Error('no session');
    const device = softAuthenticator('localhost', t.base);
    expect((await c.addPasskey(signed, device, { accountKey: user.key }, 'Phone')).status).toBe(200);
    const gone = [401, 'this passkey request has expired or was already used, try again'];

    // An assertion that signed in, sent again: its challenge was spent, no second session.
    const options = await c.postJson('/console/login/options', {});
    const assertion = device.assert(String(options.body.challenge));
    const first = await c.postJson('/console/login/verify', { response: assertion });
    expect(first.status).toBe(200);
    expect(first.setCookies).toHaveLength(1);
    const replay = await c.postJson('/console/login/verify', { response: assertion });
    expect([replay.status, replay.body.error, replay.setCookies]).toEqual([...gone, []]);
    const spent = await itemTypes();
    expect(spent.SpentWebAuthnChallenge).toBeGreaterThanOrEqual(1);

    // A challenge changed by one bit, or one the service never made: refused, and nothing written.
    const fresh = String((await c.postJson('/console/login/options', {})).body.challenge);
    const bytes = Buffer.from(fresh, 'base64url');
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 1;
    const forged = [bytes.toString('base64url'), Buffer.alloc(64, 7).toString('base64url')];
    for (const challenge of forged) {
      const writes = await writesDuring(async () => {
        const res = await c.postJson('/console/login/verify', { response: device.assert(challenge) });
        expect([res.status, res.body.error]).toEqual(gone);
      });
      expect(writes).toEqual({});
    }

    // A sign-in challenge answered to sign-up, and a sign-up one to sign-in.
    const newcomer = softAuthenticator('localhost', t.base);
    const forLogin = String((await c.postJson('/console/login/options', {})).body.challenge);
    const asSignUp = await c.postJson('/console/signup/verify', { response: newcomer.register(forLogin) });
    expect([asSignUp.status, asSignUp.body.error]).toEqual(gone);
    const forSignUp = String((await c.postJson('/console/signup/options', {})).body.challenge);
    const asLogin = await c.postJson('/console/login/verify', { response: device.assert(forSignUp) });
    expect([asLogin.status, asLogin.body.error]).toEqual(gone);
  });
});
