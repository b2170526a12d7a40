/**
 * A bounded load run: many agents and users, concurrent charges (some refused for funds, some
 * replayed), withdrawals to both rails (some to a PayPal receiver that fails, so refunds happen),
 * and reads, for a fixed time. Then it waits for every payout to settle and checks what must hold
 * under load: no 5xx, the ledger audit, and no payout paid twice on either rail.
 */
import { randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import bs58 from 'bs58';
import { auditLedger, formatAuditReport } from '../../functions/audit/ledger-audit';
import { scanLedgerItems } from '../../functions/store/audit/audit.repository';
import { listStaleInflight } from '../../functions/store/payouts/payout-inflight.repository';
import { eventOf, startReceiver } from '../webhooks/receiver';
import { type BenchContext, enabledAgent, fundedUser, inBatches, type Party } from './context';
import { closedLoop, percentile } from './http';

export interface LoadRunResult {
  seconds: number;
  concurrency: number;
  agents: number;
  users: number;
  requests: number;
  requestsPerSecond: number;
  /** Count per operation and HTTP status, e.g. "charge 201". */
  outcomes: Record<string, number>;
  serverErrors: number;
  p50Ms: number;
  p99Ms: number;
  /** Seconds from the end of the load until every payout was COMPLETED or FAILED. */
  settleSeconds: number;
  /**
   * payout.completed / payout.failed webhooks: from the payout's commit (its processedAt, written
   * in the same transaction as the outbox item) to a local receiver (docs/webhooks.md).
   */
  webhookLag: {
    events: number /** Withdrawals accepted in the run: each should have produced one event. */;
    payouts: number;
    p50Ms: number;
    p99Ms: number;
  };
}

const solanaWallet = () => bs58.encode(ed25519.getPublicKey(randomBytes(32)));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)] as T;

export async function loadRun(
  ctx: BenchContext,
  opts: { seconds: number; concurrency: number; agents: number; users: number },
): Promise<LoadRunResult> {
  const { call } = ctx;
  const agents: Party[] = await inBatches(opts.agents, 8, () => enabledAgent(ctx));
  const users: Party[] = await inBatches(opts.users, 8, (i) =>
    // One user in ten is nearly broke, so refusals (402) are part of the mix.
    fundedUser(ctx, i % 10 === 0 ? { USD: '3', USDC: '3' } : { USD: '5000', USDC: '5000' }),
  );
  const wallets = new Map(agents.map((a) => [a.id, solanaWallet()]));
  // The rail never creates a wallet's USDC token account (docs/rails.md): the agents' wallet apps did.
  for (const wallet of wallets.values()) ctx.stack.rails.solana.createTokenAccount(wallet);
  // Every agent's payout events go to one local receiver: the delivery lag under load.
  const receiver = await startReceiver('/load-hooks');
  for (const agent of agents) {
    const res = await call(
      'POST',
      '/api/v1/agents/webhooks',
      { 'x-agent-key': agent.key },
      JSON.stringify({ url: receiver.url, events: ['payout.completed', 'payout.failed'] }),
    );
    if (res.status !== 201) throw new Error(`webhook registration answered ${res.status}: ${res.body}`);
  }
  let seq = 0;
  const tag = randomBytes(3).toString('hex');
  const recentCharges: { agent: Party; user: Party; key: string; body: string }[] = [];

  const op = async (): Promise<string> => {
    const r = Math.random();
    if (r < 0.7) {
      const agent = pick(agents);
      const user = pick(users);
      const currency = Math.random() < 0.5 ? 'USD' : 'USDC';
      const amount =
        currency === 'USD' ? (1 + Math.floor(Math.random() * 500)) / 100 : (1 + Math.floor(Math.random() * 5_000_000)) / 1_000_000;
      const key = `ld-${tag}-${++seq}`;
      const body = `{"amount":${amount},"currency":"${currency}","description":"load"}`;
      const res = await call(
        'POST',
        '/api/v1/agents/charges',
        { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': key },
        body,
      );
      if (res.status === 201 && recentCharges.length < 200) recentCharges.push({ agent, user, key, body });
      return `charge ${res.status}`;
    }
    if (r < 0.75 && recentCharges.length > 0) {
      // A client retry: same key, same body → the stored answer, no second debit.
      const c = pick(recentCharges);
      const res = await call(
        'POST',
        '/api/v1/agents/charges',
        { 'x-agent-key': c.agent.key, 'x-user-key': c.user.key, 'idempotency-key': c.key },
        c.body,
      );
      return `charge-replay ${res.status}${res.headers['idempotent-replayed'] === 'true' ? '' : ' (not replayed)'}`;
    }
    if (r < 0.85) {
      const agent = pick(agents);
      const usdc = Math.random() < 0.5;
      // One USD withdrawal in five goes to a receiver the PayPal stand-in refuses: FAILED, refunded.
      const payee = usdc ? (wallets.get(agent.id) as string) : Math.random() < 0.2 ? 'fail@example.com' : 'success@example.com';
      const res = await call(
        'POST',
        '/api/v1/agents/withdraw',
        { 'x-agent-key': agent.key, 'idempotency-key': `lw-${tag}-${++seq}` },
        JSON.stringify({ amount: 1 + Math.floor(Math.random() * 3), currency: usdc ? 'USDC' : 'USD', walletAddress: payee }),
      );
      const reason = res.status === 400 ? ` ${(JSON.parse(res.body) as { error: string }).error}` : '';
      return `withdraw ${res.status}${reason}`;
    }
    const agent = pick(agents);
    const res =
      Math.random() < 0.5
        ? await call('GET', '/api/v1/agents/balance', { 'x-agent-key': agent.key })
        : await call('GET', '/api/v1/agents/charges?limit=20', { 'x-agent-key': agent.key });
    return `read ${res.status}`;
  };

  const result = await closedLoop(opts.concurrency, opts.seconds * 1000, op);
  const serverErrors = Object.entries(result.outcomes)
    .filter(([label]) => / 5\d\d/.test(label) || label === 'error')
    .reduce((a, [, n]) => a + n, 0);
  ctx.log(`  ${result.ops} requests in ${(result.elapsedMs / 1000).toFixed(1)} s; settling payouts …`);

  const settleSeconds = await waitForPayouts();
  // Deliveries trail the last commit by the pipeline's lag; then measure each payout's first arrival.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const firstArrival = new Map<string, number>();
  for (const r of receiver.received) {
    const event = eventOf(r);
    const processedAt = Date.parse(String(event.data.processedAt));
    if (!firstArrival.has(event.id)) firstArrival.set(event.id, r.at - processedAt);
  }
  await receiver.stop();
  const lags = [...firstArrival.values()];
  // Every accepted withdrawal of the load run settles (waitForPayouts) and reports one event.
  const payoutsSettled = Object.entries(result.outcomes)
    .filter(([label]) => label === 'withdraw 200')
    .reduce((a, [, n]) => a + n, 0);
  return {
    seconds: opts.seconds,
    concurrency: opts.concurrency,
    agents: opts.agents,
    users: opts.users,
    requests: result.ops,
    requestsPerSecond: result.opsPerSecond,
    outcomes: Object.fromEntries(Object.entries(result.outcomes).sort()),
    serverErrors,
    p50Ms: percentile(result.latencies, 50),
    p99Ms: percentile(result.latencies, 99),
    settleSeconds,
    webhookLag: { events: lags.length, payouts: payoutsSettled, p50Ms: percentile(lags, 50), p99Ms: percentile(lags, 99) },
  };
}

/** Waits until no payout is PENDING or PROCESSING (the in-flight index is empty); seconds waited. */
export async function waitForPayouts(maxWaitMs = 180_000): Promise<number> {
  const start = performance.now();
  const farFuture = new Date(Date.now() + 365 * 86_400_000);
  const inFlight = async () =>
    (await listStaleInflight('PENDING', farFuture, 1)).length + (await listStaleInflight('PROCESSING', farFuture, 1)).length;
  while ((await inFlight()) > 0 && performance.now() - start < maxWaitMs) await new Promise((r) => setTimeout(r, 250));
  return (performance.now() - start) / 1000;
}

/** Parallel scan segments for the final audit (DynamoDB Local pages get slower deep into a segment). */
const AUDIT_SEGMENTS = 4;

export interface SettledCheck {
  payouts: { total: number; completed: number; failed: number; stillInFlight: number; settleSeconds: number };
  /** Payouts that moved money more than once on a rail, or whose status disagrees with the rail (must be empty). */
  paidTwice: string[];
  audit: { ok: boolean; problems: string[]; summary: string; items: number; scanSeconds: number };
}

/**
 * Waits for every payout to settle (the worker, and for stragglers the reconciler), then checks
 * each rail paid each payout at most once (exactly once if COMPLETED, never if FAILED) and runs
 * the ledger audit over the whole table.
 */
export async function settleAndCheck(ctx: BenchContext, maxWaitMs = 180_000): Promise<SettledCheck> {
  const settleSeconds = await waitForPayouts(maxWaitMs);
  // One consistent scan serves the payout statuses and the audit.
  const scanStart = performance.now();
  const items = await scanLedgerItems({ segments: AUDIT_SEGMENTS });
  const scanSeconds = (performance.now() - scanStart) / 1000;
  const inFlight = () => items.payouts.filter((p) => p.status === 'PENDING' || p.status === 'PROCESSING').length;

  // Money moved per payout on each rail: a successful Solana transaction carries the memo
  // `payout:<id>`; a PayPal batch is named by sender_batch_id = payout id.
  const moved = new Map<string, number>();
  for (const tx of ctx.stack.rails.solana.landed()) {
    const id = tx.err === null && tx.memo?.startsWith('payout:') ? tx.memo.slice('payout:'.length) : undefined;
    if (id) moved.set(id, (moved.get(id) ?? 0) + 1);
  }
  for (const batch of ctx.stack.rails.paypal.batches()) {
    const paid = batch.items.filter((i) => i.status === 'SUCCESS').length;
    if (paid > 0) moved.set(batch.senderBatchId, (moved.get(batch.senderBatchId) ?? 0) + paid);
  }
  const paidTwice = [...moved.entries()].filter(([, n]) => n > 1).map(([id, n]) => `${id} paid ${n} times`);
  for (const p of items.payouts) {
    const n = moved.get(String(p.SK)) ?? 0;
    if (p.status === 'COMPLETED' && n !== 1) paidTwice.push(`${String(p.SK)} COMPLETED but paid ${n} times`);
    if (p.status === 'FAILED' && n !== 0) paidTwice.push(`${String(p.SK)} FAILED but paid ${n} times`);
  }

  const report = auditLedger(items);
  return {
    payouts: {
      total: items.payouts.length,
      completed: items.payouts.filter((p) => p.status === 'COMPLETED').length,
      failed: items.payouts.filter((p) => p.status === 'FAILED').length,
      stillInFlight: inFlight(),
      settleSeconds,
    },
    paidTwice,
    audit: { ok: report.ok, problems: report.problems.slice(0, 20), summary: formatAuditReport(report), items: items.scanned, scanSeconds },
  };
}
