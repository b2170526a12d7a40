/**
 * Grant events end to end (DESIGN §16 "Events", §15): the grant routes and the consent page write
 * their events in their own transactions; the local stream poller, the dispatcher, local SQS and
 * the delivery worker bring them, signed, to real receivers on 127.0.0.1. The payer hears
 * `grant.created` and `grant.revoked`, the agent `grant.approved` (a grant from its own request)
 * and `grant.revoked`; no event carries a key or a consent token.
 */
import { Webhook } from 'standardwebhooks';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { finalAttempts, outboxAbout, outboxEvents } from './delivery-records';
import { eventOf, type Received, type Receiver, startReceiver } from './receiver';

const t = useTestStack(
  { AUTH_CACHE_TTL_MS: '0', WEBHOOK_RETRY_SCHEDULE_SECONDS: '1,1,1,1', WEBHOOK_TIMEOUT_MS: '1000' },
  { webhooks: { visibilityTimeoutSeconds: 2, pollIntervalMs: 50 } },
);
let agentRx: Receiver;
let userRx: Receiver;

beforeEach(async () => {
  agentRx = await startReceiver();
  userRx = await startReceiver();
});
afterEach(async () => {
  await agentRx?.stop();
  await userRx?.stop();
});
auditAfterAll();

interface Hook {
  id: string;
  secret: string;
}
interface GrantBody {
  id: string;
  status: string;
  key?: string;
  [field: string]: unknown;
}
interface GrantRequestBody {
  id: string;
  status: string;
  consentUrl: string;
  grant: GrantBody | null;
}

/** An enabled agent (named, as events show it) and a payer, each with an endpoint (every event type) at its receiver. */
async function parties(agentName: string) {
  const agent = await t.enabledAgent(agentName);
  const user = await t.fundedUser({ USD: 10 });
  const agentHook = await t.call<Hook>('POST', '/api/v1/agents/webhooks', {
    headers: { 'x-agent-key': agent.key },
    body: { url: agentRx.url },
  });
  const userHook = await t.call<Hook>('POST', '/api/v1/users/me/webhooks', {
    headers: { 'x-user-key': user.key },
    body: { url: userRx.url },
  });
  expect([agentHook.status, userHook.status]).toEqual([201, 201]);
  return { agent, user, agentHook: agentHook.body, userHook: userHook.body };
}

const revoke = (userKey: string, grantId: string) =>
  t.call<GrantBody>('DELETE', `/api/v1/users/me/grants/${grantId}`, { headers: { 'x-user-key': userKey } });

/** The event of `type` about the object `id`. */
const about = (type: string, id: string) => (r: Received) => eventOf(r).type === type && eventOf(r).data.id === id;

/** Verified as a receiver would, with the endpoint's own secret (Standard Webhooks); the header id is the event's. */
function expectSigned(received: Received, hook: Hook): void {
  new Webhook(hook.secret).verify(received.body, received.headers as Record<string, string>);
  expect(received.headers['webhook-id']).toBe(eventOf(received).id);
}

/**
 * That `types` are all the events about `id` this endpoint will ever be sent, each once, from the
 * service's records rather than a wait (test/webhooks/delivery-records.ts): the outbox holds
 * exactly these for the owner, and each reached the endpoint at its first attempt.
 */
async function expectEachDeliveredOnce(hook: Hook, owner: string, id: string, types: string[]): Promise<void> {
  const events = await outboxAbout(owner, id);
  expect(events.map(([type]) => type).sort()).toEqual([...types].sort());
  const ids = events.map(([, eventId]) => eventId);
  expect(await finalAttempts(hook.id, ids)).toEqual(Object.fromEntries(ids.map((eventId) => [eventId, 1])));
}

/** No secret in what was sent or what the outbox keeps: no grant or account key, none of `secrets`. */
async function expectNoSecrets(secrets: string[]): Promise<void> {
  const sent = [...agentRx.received, ...userRx.received].map((r) => r.body);
  const stored = (await outboxEvents()).map((e) => JSON.stringify(e.data));
  expect(sent.length).toBeGreaterThan(0);
  for (const body of [...sent, ...stored]) {
    expect(body).not.toContain('ug_live_');
    expect(body).not.toContain('uk_live_');
    for (const secret of secrets) expect(body).not.toContain(secret);
  }
}

describe('grant events', () => {
  it('a grant the payer issues: grant.created to the payer only; revoked: grant.revoked to both, once, signed', async () => {
    const { agent, user, agentHook, userHook } = await parties('grant-events-direct');
    const created = await t.call<GrantBody>('POST', '/api/v1/users/me/grants', {
      headers: { 'x-user-key': user.key },
      body: { agentId: agent.id, currency: 'USD', limits: { perCharge: 5, total: 20 }, description: 'direct' },
    });
    expect(created.status).toBe(201);
    const { key, ...grant } = created.body;
    expect(key).toMatch(/^ug_live_/);

    const toUser = await userRx.waitFor(about('grant.created', grant.id), 3_000);
    expectSigned(toUser, userHook);
    // The Grant as the API shows it, without its key.
    expect(eventOf(toUser).data).toEqual(grant);

    const revoked = await revoke(user.key, grant.id);
    expect(revoked.status).toBe(200);
    const [userRevoked, agentRevoked] = await Promise.all([
      userRx.waitFor(about('grant.revoked', grant.id), 3_000),
      agentRx.waitFor(about('grant.revoked', grant.id), 3_000),
    ]);
    expectSigned(userRevoked, userHook);
    expectSigned(agentRevoked, agentHook);
    expect(eventOf(userRevoked).data).toEqual(revoked.body);
    expect(eventOf(agentRevoked).data).toEqual(revoked.body);
    expect(revoked.body).toMatchObject({ status: 'revoked', revokedAt: expect.any(String) });

    // Revoking again answers the same and tells nobody again; the agent never heard of the create.
    expect((await revoke(user.key, grant.id)).body).toEqual(revoked.body);
    await expectEachDeliveredOnce(userHook, `user#${user.id}`, grant.id, ['grant.created', 'grant.revoked']);
    await expectEachDeliveredOnce(agentHook, `agent#${agent.id}`, grant.id, ['grant.revoked']);
    await expectNoSecrets([key as string]);
  });

  it('a grant from the agent’s request: grant.created to the payer, grant.approved to the agent; no key or consent token in any event', async () => {
    const { agent, user, agentHook, userHook } = await parties('grant-events-asked');
    const asked = await t.call<GrantRequestBody>('POST', '/api/v1/agents/grant-requests', {
      headers: { 'x-agent-key': agent.key, 'idempotency-key': `ge-${Date.now()}` },
      body: { currency: 'USDC', limits: { daily: 1.5 }, approvalAbove: 1, ttlSeconds: 3600, description: 'asked' },
    });
    expect(asked.status).toBe(201);
    const token = asked.body.consentUrl.split('/consent/')[1] ?? '';
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const allowed = await fetch(asked.body.consentUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ action: 'allow', accountKey: user.key }).toString(),
      redirect: 'manual',
    });
    expect(allowed.status).toBe(303);
    const claimed = await t.call<GrantRequestBody>('GET', `/api/v1/agents/grant-requests/${asked.body.id}`, {
      headers: { 'x-agent-key': agent.key },
    });
    const { key, ...grant } = claimed.body.grant ?? { id: '', status: '' };
    expect(key).toMatch(/^ug_live_/);

    const [created, approved] = await Promise.all([
      userRx.waitFor(about('grant.created', grant.id), 3_000),
      agentRx.waitFor(about('grant.approved', grant.id), 3_000),
    ]);
    expectSigned(created, userHook);
    expectSigned(approved, agentHook);
    // Written with the approval, so they show the grant as it was then: what the claiming read showed.
    expect(eventOf(created).data).toEqual(grant);
    expect(eventOf(approved).data).toEqual(grant);
    expect(grant).toMatchObject({ status: 'active', agent: { id: agent.id, name: 'grant-events-asked' }, currency: 'USDC' });

    const revoked = await revoke(user.key, grant.id);
    const [userRevoked, agentRevoked] = await Promise.all([
      userRx.waitFor(about('grant.revoked', grant.id), 3_000),
      agentRx.waitFor(about('grant.revoked', grant.id), 3_000),
    ]);
    expectSigned(userRevoked, userHook);
    expectSigned(agentRevoked, agentHook);
    expect(eventOf(agentRevoked).data).toEqual(revoked.body);

    await expectEachDeliveredOnce(userHook, `user#${user.id}`, grant.id, ['grant.created', 'grant.revoked']);
    await expectEachDeliveredOnce(agentHook, `agent#${agent.id}`, grant.id, ['grant.approved', 'grant.revoked']);
    // Neither the grant key, the account key nor the consent token (nor the request's link) is in any event.
    await expectNoSecrets([key as string, user.key, token]);
  });
});
