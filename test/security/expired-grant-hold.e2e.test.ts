/**
 * Issue 29, low finding: a hold made under a grant could be captured after the grant expired. The
 * attacker is an agent with a short grant (a minute): it holds the payer's money for an hour and
 * captures it after the grant has ended.
 *
 * Decided (docs/grants.md "When a grant ends"): nothing under a grant moves money to its agent
 * after the grant ends. A hold's (and an approval's) `expiresAt` never passes its grant's, so the
 * agent is told its deadline when it makes the hold, the hold ends with the grant and the sweeper
 * gives it back; a hold approved with a capture window past the grant's end is refused at capture
 * (403 `grant expired`), and the payer can release it.
 */
import { expireDueCharges } from '../../functions/use-cases/charges/expiry';
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack({}, { sweepIntervalMs: 0 });
auditAfterAll();

type Charge = { id: string; status: string; pendingReason: string | null; expiresAt: string | null; failureReason: string | null };
type Me = { balances: { USD: number }; held: { USD: number } };
let n = 0;
const idem = () => `grant-end-${Date.now()}-${++n}`;

async function shortGrant(ttlSeconds: number, approvalAbove?: number) {
  const agent = await t.enabledAgent();
  const user = await t.fundedUser({ USD: 20 });
  const grant = await t.call<{ id: string; key: string; expiresAt: string }>('POST', '/api/v1/users/me/grants', {
    headers: { 'x-user-key': user.key },
    body: { agentId: agent.id, currency: 'USD', ttlSeconds, ...(approvalAbove !== undefined ? { approvalAbove } : {}) },
  });
  expect(grant.status).toBe(201);
  return { agent, user, grant: grant.body };
}

const hold = (agentKey: string, grantKey: string, amount: number) =>
  t.call<Charge>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': grantKey, 'idempotency-key': idem() },
    body: { amount, currency: 'USD', description: 'an hour of work', capture: false, holdSeconds: 3600 },
  });
const capture = (agentKey: string, id: string) =>
  t.call<Charge>('POST', `/api/v1/agents/charge/${id}/capture`, { headers: { 'x-agent-key': agentKey, 'idempotency-key': idem() } });
const me = async (userKey: string) => (await t.call<Me>('GET', '/api/v1/users/me', { headers: { 'x-user-key': userKey } })).body;

/** Runs `fn` with the clock (only the clock: timers and I/O stay real) `ms` ahead. */
async function later<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  jest.useFakeTimers({
    now: Date.now() + ms,
    advanceTimers: true,
    doNotFake: [
      'setTimeout',
      'setInterval',
      'setImmediate',
      'clearTimeout',
      'clearInterval',
      'clearImmediate',
      'nextTick',
      'queueMicrotask',
      'hrtime',
      'performance',
    ],
  });
  try {
    return await fn();
  } finally {
    jest.useRealTimers();
  }
}

describe('a hold made under a grant, after the grant ends', () => {
  it("ends with the grant: its expiresAt is the grant's, the capture after is 409 charge expired, and the hold goes back", async () => {
    const { agent, user, grant } = await shortGrant(60);
    const held = await hold(agent.key, grant.key, 5);
    expect(held.status).toBe(201);
    expect(held.body.expiresAt).toBe(grant.expiresAt);

    await later(61_000, async () => {
      const captured = await capture(agent.key, held.body.id);
      expect([captured.status, captured.body]).toEqual([409, { error: 'charge expired' }]);
      await expireDueCharges(new Date());
    });
    const after = await t.call<Charge>('GET', `/api/v1/agents/charge/${held.body.id}`, { headers: { 'x-agent-key': agent.key } });
    expect(after.body.status).toBe('EXPIRED');
    expect(await me(user.key)).toMatchObject({ balances: { USD: 20 }, held: { USD: 0 } });
  });

  it('a hold the payer approved, captured after the grant ended: 403 grant expired, nothing moves; the payer releases it', async () => {
    const { agent, user, grant } = await shortGrant(120, 1);
    const held = await hold(agent.key, grant.key, 5);
    expect(held.status).toBe(202);
    // The approval window ends with the grant too.
    expect(held.body.expiresAt).toBe(grant.expiresAt);
    const approved = await t.call<Charge>('POST', `/api/v1/users/me/charges/${held.body.id}/approve`, {
      headers: { 'x-user-key': user.key },
    });
    expect([approved.status, approved.body.pendingReason]).toEqual([200, 'capture']);
    // The capture window runs from the approval: past the grant's end.
    expect((approved.body.expiresAt ?? '') > grant.expiresAt).toBe(true);

    await later(121_000, async () => {
      const captured = await capture(agent.key, held.body.id);
      expect([captured.status, captured.body]).toEqual([403, { error: 'grant expired' }]);
    });
    expect(await me(user.key)).toMatchObject({ balances: { USD: 15 }, held: { USD: 5 } });
    const released = await t.call<Charge>('POST', `/api/v1/users/me/charges/${held.body.id}/release`, {
      headers: { 'x-user-key': user.key },
    });
    expect([released.status, released.body.status]).toEqual([200, 'FAILED']);
    expect(await me(user.key)).toMatchObject({ balances: { USD: 20 }, held: { USD: 0 } });
  });

  it('a hold captured while the grant is still valid is captured as ever', async () => {
    const { agent, grant } = await shortGrant(7200);
    const held = await hold(agent.key, grant.key, 5);
    expect(held.status).toBe(201);
    expect(held.body.expiresAt).not.toBe(grant.expiresAt);
    const captured = await capture(agent.key, held.body.id);
    expect([captured.status, captured.body.status]).toEqual([200, 'SUCCESS']);
  });
});
