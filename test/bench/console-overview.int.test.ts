/**
 * DESIGN §21's budget for the console's Overview, measured as the benchmark measures it
 * (test/bench/requests.ts `consoleOverviewCost`, the row behind `bench: console overview requests
 * N`): one signed-in GET /console, through the console function's real handler inside a counting
 * scope, sends at most 3 DynamoDB requests, the session's read included, cold or warm, for a payer
 * with history and a charge waiting for approval.
 */

import { enabledAgent, fundedUser } from './context';
import { CONSOLE_OVERVIEW_ENDPOINT, consoleOverviewRequests } from './cost';
import { consoleOverviewCost, consolePageCost, consoleSecurityCost } from './requests';
import { benchContextForTests } from './test-context';

const ctx = benchContextForTests();

const OVERVIEW_BUDGET = 3;

describe("what the console's Overview costs", () => {
  it('the session, the payer, one Query of the newest charges: 3 reads, no write, cold or warm', async () => {
    const c = ctx();
    const agent = await enabledAgent(c);
    const user = await fundedUser(c, { USD: '100' });
    const policy = await c.call('PUT', '/api/v1/users/me/policy', { 'x-user-key': user.key }, '{"approvalAbove":{"USD":1}}');
    expect(policy.status).toBe(200);
    for (const [amount, status] of [
      ['0.5', 201],
      ['2', 202],
    ] as const) {
      const res = await c.call(
        'POST',
        '/api/v1/agents/charges',
        { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `ov-${amount}-${Date.now()}` },
        `{"amount":${amount},"currency":"USD","description":"overview"}`,
      );
      expect(res.status).toBe(status);
    }
    const rows = await consoleOverviewCost(user);
    expect(rows.map((q) => ({ endpoint: q.endpoint, state: q.state, status: q.status, dynamo: q.dynamo, sqs: q.sqs }))).toEqual(
      (['cold', 'warm'] as const).map((state) => ({
        endpoint: CONSOLE_OVERVIEW_ENDPOINT,
        state,
        status: 200,
        dynamo: { GetItem: 2, Query: 1 },
        sqs: 0,
      })),
    );
    expect(consoleOverviewRequests(rows)).toBeLessThanOrEqual(OVERVIEW_BUDGET);
  });
});

describe("what the console's Security page costs", () => {
  const shape = (rows: Awaited<ReturnType<typeof consoleSecurityCost>>) =>
    rows.map((q) => ({ state: q.state, status: q.status, dynamo: q.dynamo, sqs: q.sqs }));

  it('signed in once: the session, the passkeys Query, the sessions Query — 3 reads, the session not read again', async () => {
    const user = await fundedUser(ctx(), { USD: '1' });
    expect(shape(await consoleSecurityCost(user))).toEqual(
      (['cold', 'warm'] as const).map((state) => ({ state, status: 200, dynamo: { GetItem: 1, Query: 2 }, sqs: 0 })),
    );
  });

  it('signed in elsewhere too: one BatchGetItem of the other sessions (their Last seen), 4 (docs/console.md says why)', async () => {
    const user = await fundedUser(ctx(), { USD: '1' });
    expect(shape(await consoleSecurityCost(user, 2))).toEqual(
      (['cold', 'warm'] as const).map((state) => ({ state, status: 200, dynamo: { BatchGetItem: 1, GetItem: 1, Query: 2 }, sqs: 0 })),
    );
  });
});

describe("what the console's Statement and Limits pages cost", () => {
  const shape = (rows: Awaited<ReturnType<typeof consolePageCost>>) =>
    rows.map((q) => ({ state: q.state, status: q.status, dynamo: q.dynamo }));
  const both = (dynamo: Record<string, number>) => (['cold', 'warm'] as const).map((state) => ({ state, status: 200, dynamo }));

  /** A payer an agent charged once and held money from once, the hold released. */
  async function payerWithHistory() {
    const c = ctx();
    const agent = await enabledAgent(c);
    const user = await fundedUser(c, { USD: '100' });
    const headers = () => ({ 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `sl-${user.id}-${Math.random()}` });
    expect((await c.call('POST', '/api/v1/agents/charges', headers(), '{"amount":1,"currency":"USD","description":"plain"}')).status).toBe(
      201,
    );
    const hold = await c.call(
      'POST',
      '/api/v1/agents/charges',
      headers(),
      '{"amount":2,"currency":"USD","description":"held","capture":false}',
    );
    expect(hold.status).toBe(201);
    const id = (JSON.parse(hold.body) as { id: string }).id;
    expect((await c.call('POST', `/api/v1/agents/charge/${id}/release`, headers(), '')).status).toBe(200);
    return { c, agent, user, headers };
  }

  it('Statement, page 1: the session, the balance, one Query of the rows — 3 (the agents and the open tabs from the rows)', async () => {
    const { user } = await payerWithHistory();
    expect(shape(await consolePageCost(user, '/console/statement'))).toEqual(both({ GetItem: 2, Query: 1 }));
    expect(shape(await consolePageCost(user, '/console/statement', { agent: 'a01jf0000000000000000000000', currency: 'USD' }))).toEqual(
      both({ GetItem: 2, Query: 1 }),
    );
  });

  it('Statement, page 1 with a hold its rows cannot say is settled (an open tab): the open tabs too, a Query and a BatchGetItem of what each used — 5 (docs/console.md says why)', async () => {
    const { c, user, headers } = await payerWithHistory();
    expect((await c.call('POST', '/api/v1/agents/tabs', headers(), '{"currency":"USD","limit":5}')).status).toBe(201);
    expect(shape(await consolePageCost(user, '/console/statement'))).toEqual(both({ BatchGetItem: 1, GetItem: 2, Query: 2 }));
  });

  it('Limits: the session, the policy, the charges, the grants — 4 (docs/console.md says why)', async () => {
    const { user } = await payerWithHistory();
    expect(shape(await consolePageCost(user, '/console/limits'))).toEqual(both({ GetItem: 2, Query: 2 }));
  });
});
