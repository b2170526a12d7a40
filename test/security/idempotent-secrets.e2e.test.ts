/**
 * The creations that replay a stored secret (DESIGN §24, docs/idempotency.md "Creations"): an
 * attacker who learns (or guesses) someone's Idempotency-Key replays it, hoping for the secret the
 * first answer carried: a grant key, a webhook signing secret, an agent's key.
 *
 * The property: the stored answer goes only to whoever made the request.
 * - Grants and webhook endpoints are scoped to the caller: another payer's or agent's credentials
 *   with the same key and the same body make their own (or nothing), never see the first secret.
 * - Registration has no caller: the record answers the key AND the same body only; another body is
 *   422 with no secret, the same body under another key is the name taken; the table keeps neither
 *   the key nor the secret, and the sealing key alone does not open the answer without the key.
 * - A credential that no longer stands (a rotated account key, a disabled agent) gets its 401, never
 *   the stored secret, even from a container whose auth cache still holds the agent's key.
 */
import { hash, randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { generateKey, hashKey, USER_KEY_PREFIX } from '../../functions/core/keys';
import { answerSeal } from '../../functions/store/answer-seal';
import { db } from '../../functions/store/client';
import { setAgentEnabled } from '../../functions/store/identity/agent.repository';
import { rotateUserKey } from '../../functions/store/identity/user.repository';
import { keys } from '../../functions/store/table';
import { fingerprint } from '../../functions/use-cases/idempotency';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

// The default auth cache: a key stays warm for 30 s in this container.
const t = useTestStack();
auditAfterAll();

const URL = 'http://127.0.0.1:9/hook';
const SECRETS = /ag_live_|uk_live_|ug_live_|whsec_/;
type Body = Record<string, unknown>;

const grant = (userKey: string, idem: string, agentId: string) =>
  t.call<Body>('POST', '/api/v1/users/me/grants', {
    headers: { 'x-user-key': userKey, 'idempotency-key': idem },
    body: { agentId, currency: 'USD', limits: { total: 5 } },
  });

describe("another party's credentials never get a stored secret", () => {
  it("another payer replaying a payer's grant key makes its own grant, never sees the first key", async () => {
    const agent = await t.enabledAgent();
    const victim = await t.fundedUser();
    const attacker = await t.fundedUser();
    const idem = randomUUID();
    const first = await grant(victim.key, idem, agent.id);
    expect(first.status).toBe(201);

    const stolen = await grant(attacker.key, idem, agent.id);
    expect(stolen.status).toBe(201);
    expect(stolen.headers.get('idempotent-replayed')).toBeNull();
    expect(stolen.body.key).not.toBe(first.body.key);
    expect(stolen.body.id).not.toBe(first.body.id);
    expect(stolen.text).not.toContain(String(first.body.key));
  });

  it.each([
    ['agent', '/api/v1/agents/webhooks', 'x-agent-key'],
    ['payer', '/api/v1/users/me/webhooks', 'x-user-key'],
  ] as const)("another %s replaying a webhook endpoint's key gets its own endpoint, never the first secret", async (kind, path, header) => {
    const [victim, attacker] =
      kind === 'agent' ? [await t.enabledAgent(), await t.enabledAgent()] : [await t.fundedUser(), await t.fundedUser()];
    const idem = randomUUID();
    const create = (key: string) => t.call<Body>('POST', path, { headers: { [header]: key, 'idempotency-key': idem }, body: { url: URL } });
    const first = await create(victim.key);
    expect(first.status).toBe(201);
    const stolen = await create(attacker.key);
    expect(stolen.status).toBe(201);
    expect(stolen.headers.get('idempotent-replayed')).toBeNull();
    expect(stolen.body.secret).not.toBe(first.body.secret);
    expect(stolen.text).not.toContain(String(first.body.secret));
    // The victim still gets its own answer back.
    const replay = await create(victim.key);
    expect([replay.status, replay.text]).toEqual([201, first.text]);
  });
});

describe('registration, which has no caller: the key and the body are the proof', () => {
  const register = (idem: string, body: Body) =>
    t.call<Body>('POST', '/api/v1/agents/register', { headers: { 'idempotency-key': idem }, body });

  it('gives the stored agent key to no one with another body or another key, and the table holds neither key', async () => {
    const idem = randomUUID();
    const body = { name: `victim-${process.pid}-${Date.now()}`, email: 'dev@victim.example', website: 'https://victim.example' };
    const first = await register(idem, body);
    expect(first.status).toBe(201);
    const apiKey = String(first.body.apiKey);

    // The key (leaked, guessed), with what the attacker can see of the agent but not its e-mail.
    const otherBody = await register(idem, { ...body, email: 'attacker@evil.example' });
    expect([otherBody.status, otherBody.body]).toEqual([422, { error: 'idempotency key reused with different request' }]);
    // The body (the name is public), with a key of its own.
    const otherKey = await register(randomUUID(), body);
    expect([otherKey.status, otherKey.body]).toEqual([409, { error: 'agent name already taken' }]);
    for (const res of [otherBody, otherKey]) {
      expect(res.text).not.toMatch(SECRETS);
      expect(res.headers.get('idempotent-replayed')).toBeNull();
    }

    // Someone reading the table finds the record under the key's hash and the answer sealed.
    const recordKey = keys.idempotency('public#register', `sha256:${hash('sha256', idem, 'hex')}`);
    const record = (await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: recordKey, ConsistentRead: true }))).Item;
    expect(record).toBeDefined();
    const text = JSON.stringify(record);
    expect(text).not.toContain(idem);
    expect(text).not.toContain(apiKey);
    expect(text).not.toMatch(SECRETS);
    // Even with the sealing key (here the local one; KMS on AWS), the answer opens only with the Idempotency-Key.
    const fp = fingerprint(body);
    const sealed = String(record?.body);
    await expect(answerSeal.open(sealed, { scope: 'public#register', key: randomUUID(), fingerprint: fp }, new Date())).rejects.toThrow();
    await expect(answerSeal.open(sealed, { scope: 'public#register', key: idem, fingerprint: fp }, new Date())).resolves.toBe(first.text);

    // Whoever holds both is the requester retrying: the same answer.
    const replay = await register(idem, body);
    expect([replay.status, replay.text, replay.headers.get('idempotent-replayed')]).toEqual([201, first.text, 'true']);
  });
});

describe('a credential that no longer stands gets its 401, never the stored secret', () => {
  // An account key's POST is looked up afresh (use-cases/auth.ts), and the create's transaction checks
  // the key again, above the replay (store/transact.ts PRECEDENCE.credential): both stand in the way.
  it('a rotated-away account key replaying a grant', async () => {
    const agent = await t.enabledAgent();
    const payer = await t.fundedUser();
    const idem = randomUUID();
    const first = await grant(payer.key, idem, agent.id);
    expect(first.status).toBe(201);
    // Rotated in another container (the payer's remedy for a leak): this one's cache is not told.
    await rotateUserKey(payer.id, hashKey(payer.key), hashKey(generateKey(USER_KEY_PREFIX)));

    const replay = await grant(payer.key, idem, agent.id);
    expect([replay.status, replay.body]).toEqual([401, { error: 'invalid user key' }]);
    expect(replay.text).not.toMatch(SECRETS);
  });

  it('a rotated-away account key replaying a webhook endpoint', async () => {
    const payer = await t.fundedUser();
    const idem = randomUUID();
    const create = () =>
      t.call<Body>('POST', '/api/v1/users/me/webhooks', {
        headers: { 'x-user-key': payer.key, 'idempotency-key': idem },
        body: { url: URL },
      });
    expect((await create()).status).toBe(201);
    await rotateUserKey(payer.id, hashKey(payer.key), hashKey(generateKey(USER_KEY_PREFIX)));

    const replay = await create();
    expect([replay.status, replay.body]).toEqual([401, { error: 'invalid user key' }]);
    expect(replay.text).not.toMatch(SECRETS);
  });

  // The agent's key is served from this container's cache for 30 s: only the transaction's kill
  // switch, ranked above the replay, refuses it (seen failing with the replay ranked first: 201 and the secret).
  it("a disabled agent, still enabled in this container's cache, replaying a webhook endpoint", async () => {
    const agent = await t.enabledAgent();
    const idem = randomUUID();
    const create = () =>
      t.call<Body>('POST', '/api/v1/agents/webhooks', {
        headers: { 'x-agent-key': agent.key, 'idempotency-key': idem },
        body: { url: URL },
      });
    expect((await create()).status).toBe(201);
    // Disabled in another container.
    expect(await setAgentEnabled(agent.id, false)).toBeDefined();

    const replay = await create();
    expect([replay.status, replay.body]).toEqual([401, { error: 'invalid or disabled agent key' }]);
    expect(replay.text).not.toMatch(SECRETS);
  });
});
