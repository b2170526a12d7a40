/**
 * What every benchmark phase shares: the local stack (the real handlers behind the node:http
 * adapter, in this process), its DynamoDB Local, a keep-alive HTTP client, and helpers that set up
 * agents and users through the admin API.
 */
import { randomBytes } from 'node:crypto';
import type { LocalStack } from '../../bin/local/stack';
import type { Call } from './http';

export interface BenchContext {
  stack: LocalStack;
  call: Call;
  admin: Record<string, string>;
  quick: boolean;
  log: (line: string) => void;
}

export interface Party {
  key: string;
  id: string;
  /** An agent's name (what its charges carry as agentName). */
  name?: string;
}

let seq = 0;
const runTag = randomBytes(3).toString('hex');

/** Registers an agent through the API and enables it through the admin API. */
export async function enabledAgent(ctx: BenchContext): Promise<Party> {
  const name = `bench-${runTag}-${++seq}`;
  const reg = await ctx.call(
    'POST',
    '/api/v1/agents/register',
    {},
    JSON.stringify({ name, email: 'bench@example.com', website: 'https://example.com' }),
  );
  if (reg.status !== 201) throw new Error(`register failed: ${reg.status} ${reg.body}`);
  const { apiKey, agentId } = JSON.parse(reg.body) as { apiKey: string; agentId: string };
  const patch = await ctx.call('PATCH', `/api/v1/admin/agents/${agentId}`, ctx.admin, JSON.stringify({ enabled: true }));
  if (patch.status !== 200) throw new Error(`enable failed: ${patch.status} ${patch.body}`);
  return { key: apiKey, id: agentId, name };
}

/** Creates a user and credits it (decimal text per currency) through the admin API. */
export async function fundedUser(ctx: BenchContext, credits: Partial<Record<'USD' | 'USDC', string>>): Promise<Party> {
  const created = await ctx.call('POST', '/api/v1/admin/users', ctx.admin);
  if (created.status !== 201) throw new Error(`create user failed: ${created.status} ${created.body}`);
  const { id, userKey } = JSON.parse(created.body) as { id: string; userKey: string };
  for (const [currency, amount] of Object.entries(credits)) {
    const res = await ctx.call(
      'POST',
      `/api/v1/admin/users/${id}/credits`,
      { ...ctx.admin, 'idempotency-key': `bench-seed-${id}-${currency}` },
      `{"amount":${amount},"currency":"${currency}"}`,
    );
    if (res.status !== 200) throw new Error(`credit failed: ${res.status} ${res.body}`);
  }
  return { key: userKey, id };
}

/** Runs `fn` for every index with at most `limit` in flight. */
export async function inBatches<T>(count: number, limit: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, count) }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await fn(i);
      }
    }),
  );
  return out;
}
