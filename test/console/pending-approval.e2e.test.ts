/**
 * Issue 38: on AWS, Activity, Limits and the CSV answered 500 once a payer had a charge waiting for
 * approval. They list the payer's charges, and a PENDING `user_approval` charge carries its approval
 * link, derived from the approval secret (use-cases/identity/payers.ts `listMyCharges`), which the console's
 * functions were not given. The tests had not seen it: every function read the one test environment,
 * whose APPROVAL_SECRET every function saw. Now each function of the local stack reads the
 * environment its synthesized Lambda gets (bin/local/function-environments.ts), and this is the
 * payer's walk of the report, over HTTP.
 */
import { deployedVariables } from '../../bin/local/function-environments';
import { startConsoleStack } from '../browser/console';
import { auditAfterAll } from '../support/audit';
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

/** Signs in with the account key (the console's own form) and returns the session's cookie. */
async function signIn(accountKey: string): Promise<string> {
  const res = await fetch(`${t.base}/console/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: t.base },
    body: new URLSearchParams({ accountKey }).toString(),
  });
  expect(res.status).toBe(303);
  const cookie = res.headers.getSetCookie()[0]?.split(';', 1)[0];
  if (!cookie) throw new Error('no session cookie');
  return cookie;
}

describe('the console with a charge waiting for approval', () => {
  it('runs each console function with only what its Lambda is given: no approval secret of the test environment', () => {
    for (const name of ['console', 'console-pages']) {
      expect({ name, approvalSecret: deployedVariables(name).has('APPROVAL_SECRET') }).toEqual({ name, approvalSecret: true });
    }
  });

  it('shows Overview, Activity, Limits, Approvals and the CSV with the pending charge', async () => {
    const agent = await t.enabledAgent();
    const user = await t.fundedUser({ USD: 100 });
    const policy = await t.call('PUT', '/api/v1/users/me/policy', {
      headers: { 'x-user-key': user.key },
      body: { approvalAbove: { USD: 10 } },
    });
    expect(policy.status).toBe(200);
    const charge = await t.call<{ id: string; status: string }>('POST', '/api/v1/agents/charges', {
      headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `pending-${Date.now()}` },
      raw: '{"amount":25,"currency":"USD","description":"waits for the payer"}',
    });
    expect(charge.status).toBe(202);

    const cookie = await signIn(user.key);
    const seen: Record<string, number> = {};
    // The Statement in Activity's place (DESIGN §26): Activity's URLs redirect to it.
    for (const path of ['/console', '/console/statement', '/console/statement?type=hold', '/console/limits', '/console/approvals']) {
      const res = await fetch(`${t.base}${path}`, { headers: { cookie }, redirect: 'manual' });
      seen[path] = res.status;
      if (path === '/console/statement' && res.status === 200) expect(await res.text()).toContain('waits for the payer');
    }
    const csv = await fetch(`${t.base}/console/statement/csv`, { headers: { cookie }, redirect: 'manual' });
    seen['/console/statement/csv'] = csv.status;
    const activity = await fetch(`${t.base}/console/activity?status=PENDING&currency=USD`, { headers: { cookie }, redirect: 'manual' });
    expect([activity.status, activity.headers.get('location')]).toEqual([303, '/console/statement?currency=USD']);
    expect(seen).toEqual({
      '/console': 200,
      '/console/statement': 200,
      '/console/statement?type=hold': 200,
      '/console/limits': 200,
      '/console/approvals': 200,
      '/console/statement/csv': 200,
    });
    expect(csv.headers.get('content-type')).toContain('text/csv');
    // The held charge's row names it as its reference.
    expect(await csv.text()).toContain(`,${charge.body.id}\r\n`);
  });
});
