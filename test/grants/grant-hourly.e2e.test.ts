/**
 * `limits.hourly` (DESIGN §27, docs/grants.md "Decisions where §16 is silent"): the most a grant's agent may spend
 * per UTC clock hour, exactly like `daily` — the same counter on the grant item (`spentHour`,
 * conditioned in the charge's own transaction), the same refusal (402 `spending limit exceeded`,
 * kept FAILED), a released hold given back to the hour it counted in, and a fresh counter when the
 * clock hour turns. The ledger audit after the file checks `spentHour` against the charges.
 */
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';

const t = useTestStack();
auditAfterAll();

type Charge = { id: string; status: string; failureReason: string | null; error?: string };
type Grant = { id: string; key: string; limits: Record<string, number>; spent: number };
let n = 0;
const idem = () => `hourly-${Date.now()}-${++n}`;

async function hourlyGrant(hourly: number) {
  const agent = await t.enabledAgent();
  const user = await t.fundedUser({ USD: 20 });
  const made = await t.call<Grant>('POST', '/api/v1/users/me/grants', {
    headers: { 'x-user-key': user.key },
    body: { agentId: agent.id, currency: 'USD', limits: { hourly, daily: 10 } },
  });
  expect(made.status).toBe(201);
  expect(made.body.limits).toEqual({ hourly, daily: 10 });
  return { agent, user, grant: made.body };
}

const charge = (agentKey: string, grantKey: string, amount: number, capture = true) =>
  t.call<Charge>('POST', '/api/v1/agents/charges', {
    headers: { 'x-agent-key': agentKey, 'x-user-key': grantKey, 'idempotency-key': idem() },
    body: { amount, currency: 'USD', description: 'hourly', ...(capture ? {} : { capture: false }) },
  });

/** Runs `fn` with the clock (only the clock) `ms` ahead, as test/security/expired-grant-hold.e2e.test.ts does. */
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

describe('limits.hourly', () => {
  it('refuses past the hour’s limit (402, kept FAILED), gives a released hold back, and is exact under concurrency', async () => {
    const { agent, user, grant } = await hourlyGrant(1);
    const held = await charge(agent.key, grant.key, 0.6, false);
    expect(held.status).toBe(201);
    const over = await charge(agent.key, grant.key, 0.5);
    expect([over.status, over.body.error]).toEqual([402, 'spending limit exceeded']);
    // The amount alone over the hourly limit: refused before any counter is read, the same words.
    const alone = await charge(agent.key, grant.key, 1.01);
    expect([alone.status, alone.body.error]).toEqual([402, 'spending limit exceeded']);
    const released = await t.call('POST', `/api/v1/users/me/charges/${held.body.id}/release`, { headers: { 'x-user-key': user.key } });
    expect(released.status).toBe(200);
    // Ten at once for 0.25 each under 1.00 an hour: exactly four.
    const burst = await Promise.all(Array.from({ length: 10 }, () => charge(agent.key, grant.key, 0.25)));
    expect(burst.filter((r) => r.status === 201)).toHaveLength(4);
    expect(burst.filter((r) => r.status === 402)).toHaveLength(6);
    const read = await t.call<Grant>('GET', `/api/v1/users/me/grants/${grant.id}`, { headers: { 'x-user-key': user.key } });
    expect(read.body.spent).toBe(1);
  });

  it('starts again when the UTC clock hour turns', async () => {
    const { agent, grant } = await hourlyGrant(0.5);
    expect((await charge(agent.key, grant.key, 0.5)).status).toBe(201);
    expect((await charge(agent.key, grant.key, 0.01)).status).toBe(402);
    await later(3_600_000, async () => {
      expect((await charge(agent.key, grant.key, 0.5)).status).toBe(201);
      expect((await charge(agent.key, grant.key, 0.01)).status).toBe(402);
    });
  });
});
