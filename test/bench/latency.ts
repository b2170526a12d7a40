/**
 * Latency per endpoint through the local HTTP stack, one request at a time (no queueing), so
 * the percentiles show the cost of the request path itself: adapter, handler, SDK, DynamoDB Local.
 */
import { ROUTES } from '../../functions/api/routes';
import { type BenchContext, enabledAgent, fundedUser, inBatches, type Party } from './context';
import type { BenchReply } from './http';
import { percentile } from './http';

export interface LatencyRow {
  endpoint: string;
  samples: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  meanMs: number;
}

/** Unmeasured requests of the same kind first: JIT and DynamoDB Local's own warm-up per code path. */
const WARMUP = 30;

/** `op(i)` for i in [0, WARMUP) warms up, for i in [WARMUP, WARMUP + n) is measured. */
async function sample(endpoint: string, n: number, expect: number, op: (i: number) => Promise<BenchReply>): Promise<LatencyRow> {
  for (let i = 0; i < WARMUP; i++) {
    const res = await op(i);
    if (res.status !== expect) throw new Error(`${endpoint} (warm-up): ${res.status} (expected ${expect}) ${res.body}`);
  }
  const times: number[] = [];
  for (let i = WARMUP; i < WARMUP + n; i++) {
    const t0 = performance.now();
    const res = await op(i);
    times.push(performance.now() - t0);
    if (res.status !== expect) throw new Error(`${endpoint}: ${res.status} (expected ${expect}) ${res.body}`);
  }
  return {
    endpoint,
    samples: n,
    p50Ms: percentile(times, 50),
    p95Ms: percentile(times, 95),
    p99Ms: percentile(times, 99),
    meanMs: times.reduce((a, b) => a + b, 0) / n,
  };
}

export async function endpointLatency(ctx: BenchContext, n: number): Promise<LatencyRow[]> {
  const { call, admin } = ctx;
  const agent = await enabledAgent(ctx);
  const user = await fundedUser(ctx, { USD: '100000', USDC: '100000' });
  const h = { 'x-agent-key': agent.key };
  const rows: LatencyRow[] = [];
  const tag = Date.now();

  let chargeId = '';
  rows.push(
    await sample('POST /api/v1/agents/charges', n, 201, async (i) => {
      const res = await call(
        'POST',
        '/api/v1/agents/charges',
        { ...h, 'x-user-key': user.key, 'idempotency-key': `lat-${tag}-${i}` },
        '{"amount":0.01,"currency":"USD","description":"latency"}',
      );
      chargeId = (JSON.parse(res.body) as { id: string }).id;
      return res;
    }),
  );
  rows.push(
    await sample('POST /api/v1/agents/charges (replay)', n, 201, () =>
      call(
        'POST',
        '/api/v1/agents/charges',
        { ...h, 'x-user-key': user.key, 'idempotency-key': `lat-${tag}-0` },
        '{"amount":0.01,"currency":"USD","description":"latency"}',
      ),
    ),
  );
  rows.push(await sample('GET /api/v1/agents/charges', n, 200, () => call('GET', '/api/v1/agents/charges?page=1&limit=20', h)));
  rows.push(await sample('GET /api/v1/agents/charge/{id}', n, 200, () => call('GET', `/api/v1/agents/charge/${chargeId}`, h)));
  rows.push(await sample('GET /api/v1/agents/balance', n, 200, () => call('GET', '/api/v1/agents/balance', h)));

  if (ROUTES.some((r) => r.name === 'withdraw')) {
    // One withdrawal per agent: the in-flight lock allows no second one until the first is paid.
    const withdrawers: Party[] = await inBatches(WARMUP + n, 4, async (i) => {
      const a = await enabledAgent(ctx);
      const res = await call(
        'POST',
        '/api/v1/agents/charges',
        { 'x-agent-key': a.key, 'x-user-key': user.key, 'idempotency-key': `lwf-${tag}-${i}` },
        '{"amount":2,"currency":"USD","description":"earn"}',
      );
      if (res.status !== 201) throw new Error(`funding charge: ${res.status} ${res.body}`);
      return a;
    });
    rows.push(
      await sample('POST /api/v1/agents/withdraw', n, 200, (i) =>
        call(
          'POST',
          '/api/v1/agents/withdraw',
          { 'x-agent-key': (withdrawers[i] as Party).key, 'idempotency-key': `lwd-${tag}-${i}` },
          '{"amount":1,"currency":"USD","walletAddress":"bench-payee@example.com"}',
        ),
      ),
    );
    rows.push(
      await sample('GET /api/v1/agents/withdraw', n, 200, (i) =>
        call('GET', '/api/v1/agents/withdraw', { 'x-agent-key': (withdrawers[i] as Party).key }),
      ),
    );
  }
  rows.push(
    await sample('POST /api/v1/agents/register', n, 201, (i) =>
      call(
        'POST',
        '/api/v1/agents/register',
        {},
        JSON.stringify({ name: `lat-${tag}-${i}`, email: 'l@example.com', website: 'https://example.com' }),
      ),
    ),
  );
  rows.push(
    await sample('POST /api/v1/admin/users/{id}/credits', n, 200, (i) =>
      call(
        'POST',
        `/api/v1/admin/users/${user.id}/credits`,
        { ...admin, 'idempotency-key': `lc-${tag}-${i}` },
        '{"amount":1,"currency":"USDC"}',
      ),
    ),
  );
  rows.push(await sample('GET /health', n, 200, () => call('GET', '/health')));
  return rows;
}
