/**
 * Starts the local stack (the same code `npm start` runs) on a free port, against the run's
 * shared DynamoDB Local and this file's own table, plus helpers to set up agents and users.
 * Every table request a function of the stack sends is checked against that function's grant
 * (test/support/table-access.ts); `stop` fails when any was outside it, as IAM would refuse it.
 */
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../bin/local/stack';
import { config } from '../../functions/config';
import { createdUserBody, registeredAgentBody } from '../../functions/contracts/responses/accounts';
import { expectBody } from './bodies';
import { client } from './http';
import { createTestTable } from './table';
import { watchTableGrants } from './table-access';

export interface TestStack {
  stack: LocalStack;
  call: ReturnType<typeof client>;
  admin: Record<string, string>;
  /** Registers an agent and enables it; returns its key and id. */
  enabledAgent(name?: string): Promise<{ key: string; id: string }>;
  /** Creates a user credited with the given decimal amounts. */
  fundedUser(credits?: Partial<Record<'USD' | 'USDC', number | string>>): Promise<{ key: string; id: string }>;
  /** An enabled agent that has earned the given decimal amounts by charging a fresh user. */
  earningAgent(earned: Partial<Record<'USD' | 'USDC', number | string>>): Promise<{ key: string; id: string }>;
}

let counter = 0;

export async function startTestStack(
  env: Record<string, string> = {},
  options: Pick<LocalStackOptions, 'payouts' | 'sweepIntervalMs' | 'topupWatchIntervalMs' | 'webhooks' | 'port' | 'publicBaseUrl'> = {},
): Promise<TestStack> {
  const stack = await startLocalStack({
    port: 0,
    dynamoEndpoint: config().DYNAMODB_ENDPOINT ?? '',
    tableName: config().TABLE_NAME,
    adminKey: config().ADMIN_KEY ?? 'test-admin-key-0123456789',
    env: { LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'SILENT', ...env },
    // The charge sweeper's Query would show in the request counts; tests that want it say so.
    sweepIntervalMs: 0,
    // Likewise the top-up watcher's; top-up tests run it themselves.
    topupWatchIntervalMs: 0,
    // A file calls a few routes: each handler loads at its first request (docs/testing.md "Fast tests").
    loadRoutesOnFirstRequest: true,
    ...options,
  });
  const grants = watchTableGrants();
  const stop = stack.stop;
  stack.stop = async () => {
    grants.stop();
    await stop();
    const denied = [...new Set(grants.denied)];
    if (denied.length > 0) {
      throw new Error(
        `requests outside their function's table grant (functions/api/routes.ts, functions/store/access.ts; docs/operating/least-privilege.md):\n${denied.join('\n')}`,
      );
    }
  };
  const call = client(stack.url);
  const admin = { 'x-admin-key': stack.adminKey };
  const t: TestStack = {
    stack,
    call,
    admin,
    async enabledAgent(name) {
      const reg = expectBody(
        await call('POST', '/api/v1/agents/register', {
          body: {
            name: name ?? `agent-${process.pid}-${++counter}-${Date.now()}`,
            email: 'dev@example.com',
            website: 'https://example.com',
          },
        }),
        registeredAgentBody,
        201,
      );
      const patch = await call('PATCH', `/api/v1/admin/agents/${reg.agentId}`, { headers: admin, body: { enabled: true } });
      if (patch.status !== 200) throw new Error(`enable failed: ${patch.status} ${patch.text}`);
      return { key: reg.apiKey, id: reg.agentId };
    },
    async fundedUser(credits = {}) {
      const created = expectBody(await call('POST', '/api/v1/admin/users', { headers: admin }), createdUserBody, 201);
      for (const [currency, amount] of Object.entries(credits)) {
        const res = await call('POST', `/api/v1/admin/users/${created.id}/credits`, {
          headers: { ...admin, 'idempotency-key': `seed-${created.id}-${currency}` },
          raw: `{"amount":${amount},"currency":"${currency}"}`,
        });
        if (res.status !== 200) throw new Error(`credit failed: ${res.status} ${res.text}`);
      }
      return { key: created.userKey, id: created.id };
    },
    async earningAgent(earned) {
      const agent = await t.enabledAgent();
      const user = await t.fundedUser(earned);
      for (const [currency, amount] of Object.entries(earned)) {
        const res = await call('POST', '/api/v1/agents/charges', {
          headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `earn-${agent.id}-${currency}` },
          raw: `{"amount":${amount},"currency":"${currency}","description":"earned in a test"}`,
        });
        if (res.status !== 201) throw new Error(`charge failed: ${res.status} ${res.text}`);
      }
      return agent;
    },
  };
  return t;
}

/** What `startTestStack` takes: the functions' environment and the local stack's options. */
export type TestStackArgs = Parameters<typeof startTestStack>;

/**
 * The e2e file's stack as a fixture: its own table and a stack on it before the file's tests, the
 * stack stopped (its grant check included) after them. Returns the stack, usable from inside a
 * test or hook once `beforeAll` has run (reading it earlier throws, naming the mistake). Call
 * `auditAfterAll()` after it: hooks run in the order declared, so the audit sees the stopped stack.
 *
 * A file whose environment names something started first (a recording RPC's URL) passes a function
 * returning the arguments (start that thing in a `beforeAll` declared above this call): the function
 * is called in the fixture's `beforeAll`, after the hooks declared before it.
 */
export function useTestStack(...args: TestStackArgs | [() => TestStackArgs]): TestStack {
  let started: TestStack | undefined;
  beforeAll(async () => {
    await createTestTable();
    const [first, ...rest] = args;
    started = await startTestStack(...(typeof first === 'function' ? first() : ([first, ...rest] as TestStackArgs)));
  });
  afterAll(async () => started?.stack.stop());
  return new Proxy({} as TestStack, {
    get(_, property: keyof TestStack) {
      if (!started) throw new Error(`the test stack is read before beforeAll started it (.${String(property)})`);
      return started[property];
    },
  });
}
