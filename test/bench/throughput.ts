/**
 * Charge throughput through the whole local HTTP stack versus the floor underneath it: raw
 * TransactWriteItems of exactly the items the service's charge transaction holds (built by the
 * service's own store code, commitCharge, and captured instead of sent: see `rawCharge`) sent
 * straight to the same DynamoDB Local with a client of its own, at the same concurrency, in
 * alternating rounds of the same run. The ratio of the two is the figure
 * that survives a noisy shared machine; absolute ops/s do not.
 *
 * The raw charges are real charges (same users, same agents, same item layout), so the ledger
 * audit at the end of the run covers them too.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { serialize } from '../../functions/contracts/json';
import { chargeView } from '../../functions/contracts/views';
import { decideCharge } from '../../functions/core/charge-decision';
import type { Charge } from '../../functions/core/charges';
import type { IdempotencyWrite } from '../../functions/core/idempotency';
import { newChargeId } from '../../functions/core/ids';
import { hashKey } from '../../functions/core/keys';
import { periodsOf } from '../../functions/core/policy';
import type { PayerState } from '../../functions/core/users';
import { commitCharge } from '../../functions/store/charges/charge.repository';
import { readPayerState } from '../../functions/store/identity/user.repository';
import { chargeEvents } from '../../functions/use-cases/events/events';
import { fingerprint } from '../../functions/use-cases/idempotency';
import { type BenchContext, enabledAgent, fundedUser, inBatches, type Party } from './context';
import { closedLoop, type LoadResult, percentile } from './http';
import { cpuMsOf, javaChildren } from './proc';
import { type CapturedWrite, capturedWrites } from './requests';

export interface ThroughputRound {
  round: number;
  kind: 'service' | 'raw';
  ops: number;
  opsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU time of this Node process (client + HTTP stack + SDK) per operation, ms. */
  nodeCpuMsPerOp: number;
  /** CPU time of DynamoDB Local per operation, ms (undefined off Linux). */
  dynamoCpuMsPerOp: number | undefined;
  outcomes: Record<string, number>;
}

export interface ThroughputResult {
  concurrency: number;
  roundSeconds: number;
  rounds: ThroughputRound[];
  serviceOpsPerSecond: number;
  rawOpsPerSecond: number;
  /** service ops ÷ raw ops over equal total time. */
  ratio: number;
  serviceP50Ms: number;
  rawP50Ms: number;
  /** Non-201 answers / failed raw transactions (must be 0). */
  failures: number;
}

const AMOUNT_TEXT = '0.01';
const AMOUNT_MINOR = 1;
const DESCRIPTION = 'bench charge';

export async function chargeThroughput(
  ctx: BenchContext,
  opts: { concurrency: number; roundSeconds: number; rounds: number; warmupSeconds: number },
): Promise<ThroughputResult> {
  const agents: Party[] = [];
  for (let i = 0; i < 4; i++) agents.push(await enabledAgent(ctx));
  const users = await inBatches(opts.concurrency, 8, () => fundedUser(ctx, { USD: '1000000' }));

  let keySeq = 0;
  const service = async (w: number): Promise<string> => {
    const agent = agents[w % agents.length] as Party;
    const user = users[w % users.length] as Party;
    const res = await ctx.call(
      'POST',
      '/api/v1/agents/charges',
      { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `tp-${++keySeq}` },
      `{"amount":${AMOUNT_TEXT},"currency":"USD","description":"${DESCRIPTION}"}`,
    );
    return String(res.status);
  };

  const raw = rawCharges(ctx.stack.dynamoEndpoint);
  const rawCharge = async (w: number): Promise<string> => {
    await raw.charge(agents[w % agents.length] as Party, users[w % users.length] as Party);
    return '201';
  };

  // Warm both paths (JIT, sockets, auth caches) before anything is measured.
  await closedLoop(opts.concurrency, opts.warmupSeconds * 1000, service);
  await closedLoop(opts.concurrency, opts.warmupSeconds * 1000, rawCharge);

  const rounds: ThroughputRound[] = [];
  const java = javaChildren();
  const summarize = (
    round: number,
    kind: 'service' | 'raw',
    r: LoadResult,
    cpuMicros: number,
    javaMs: number | undefined,
  ): ThroughputRound => ({
    round,
    kind,
    ops: r.ops,
    opsPerSecond: r.opsPerSecond,
    p50Ms: percentile(r.latencies, 50),
    p99Ms: percentile(r.latencies, 99),
    nodeCpuMsPerOp: cpuMicros / 1000 / Math.max(1, r.ops),
    dynamoCpuMsPerOp: javaMs === undefined ? undefined : javaMs / Math.max(1, r.ops),
    outcomes: r.outcomes,
  });
  const samples: Record<'service' | 'raw', LoadResult[]> = { service: [], raw: [] };
  for (let round = 1; round <= opts.rounds; round++) {
    // Alternate which goes first so drift on the machine hits both sides alike.
    const order: ('service' | 'raw')[] = round % 2 === 1 ? ['raw', 'service'] : ['service', 'raw'];
    for (const kind of order) {
      const cpu0 = process.cpuUsage();
      const java0 = cpuMsOf(java);
      const r = await closedLoop(opts.concurrency, opts.roundSeconds * 1000, kind === 'service' ? service : rawCharge);
      const cpu = process.cpuUsage(cpu0);
      const java1 = cpuMsOf(java);
      samples[kind].push(r);
      const s = summarize(round, kind, r, cpu.user + cpu.system, java0 === undefined || java1 === undefined ? undefined : java1 - java0);
      rounds.push(s);
      ctx.log(
        `  round ${round} ${kind.padEnd(7)} ${s.opsPerSecond.toFixed(1)} ops/s  p50 ${s.p50Ms.toFixed(1)} ms  node CPU ${s.nodeCpuMsPerOp.toFixed(2)} ms/op (${((cpu.user + cpu.system) / 10 / r.elapsedMs).toFixed(0)}% of a core)  DynamoDB Local CPU ${s.dynamoCpuMsPerOp?.toFixed(2) ?? '?'} ms/op  ${JSON.stringify(s.outcomes)}`,
      );
    }
  }
  raw.close();

  const total = (rs: LoadResult[]) => rs.reduce((a, r) => a + r.ops, 0);
  const elapsed = (rs: LoadResult[]) => rs.reduce((a, r) => a + r.elapsedMs, 0);
  const serviceOpsPerSecond = (total(samples.service) * 1000) / elapsed(samples.service);
  const rawOpsPerSecond = (total(samples.raw) * 1000) / elapsed(samples.raw);
  const all = (rs: LoadResult[]) => rs.flatMap((r) => r.latencies);
  const failures = [...samples.service, ...samples.raw].reduce((a, r) => a + r.ops - (r.outcomes['201'] ?? 0), 0);
  return {
    concurrency: opts.concurrency,
    roundSeconds: opts.roundSeconds,
    rounds,
    serviceOpsPerSecond,
    rawOpsPerSecond,
    ratio: serviceOpsPerSecond / rawOpsPerSecond,
    serviceP50Ms: percentile(all(samples.service), 50),
    rawP50Ms: percentile(all(samples.raw), 50),
    failures,
  };
}

export interface RawCharges {
  /** One charge of 0.01 USD, sent as the service would send it; throws when it is not committed. */
  charge(agent: Party, user: Party): Promise<void>;
  /** The TransactWriteItems input `charge` would send (built, not sent). */
  transactionOf(agent: Party, user: Party): Promise<CapturedWrite>;
  close(): void;
}

/**
 * The raw baseline: exactly the transaction the service sends for a charge, built by the
 * service's own store code (commitCharge, with the charge, idempotency record and webhook events
 * the use case would pass), captured instead of sent (requests.ts `capturedWrites`), and sent by
 * a client of its own. Whatever the store puts in a charge's transaction, raw sends too; only the
 * HTTP adapter, auth, zod and the use case's deciding are left out.
 */
export function rawCharges(dynamoEndpoint: string): RawCharges {
  const raw = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: 'us-east-1',
      endpoint: dynamoEndpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 4,
      requestHandler: { httpAgent: { keepAlive: true }, requestTimeout: 5_000 },
    }),
    { marshallOptions: { removeUndefinedValues: true } },
  );

  let keySeq = 0;
  // The raw side judges nothing: each payer's counters are this period's once it has been charged
  // (the service's warm-up charges every payer first), so it commits under the state read here.
  const states = new Map<string, PayerState>();
  const stateOf = async (userId: string): Promise<PayerState> => {
    const known = states.get(userId);
    if (known) return known;
    const read = (await readPayerState(userId)) ?? { policy: {}, policyVersion: 0, day: undefined, month: undefined };
    states.set(userId, read);
    return read;
  };
  const keyHashes = new Map<string, string>();
  const hashOf = (key: string): string => {
    let h = keyHashes.get(key);
    if (!h) {
      h = hashKey(key);
      keyHashes.set(key, h);
    }
    return h;
  };

  const build = async (agent: Party, user: Party, now: Date): Promise<{ write: CapturedWrite; state: PayerState }> => {
    const charge: Charge = {
      id: newChargeId(agent.id),
      agentId: agent.id,
      userId: user.id,
      idempotencyKey: `raw-${++keySeq}`,
      amount: AMOUNT_MINOR,
      currency: 'USD',
      description: DESCRIPTION,
      status: 'SUCCESS',
      createdAt: now.toISOString(),
      ...(agent.name !== undefined ? { agentName: agent.name } : {}),
    };
    const state = await stateOf(user.id);
    const decision = decideCharge({ policy: state.policy, agentId: agent.id, currency: charge.currency, amount: charge.amount, now });
    if (decision.kind !== 'accepted' || decision.pending) throw new Error(`the bench payer's policy did not accept a plain charge`);
    const idem: IdempotencyWrite = {
      scope: `${agent.id}#charges`,
      key: charge.idempotencyKey,
      record: {
        fingerprint: fingerprint({ userId: user.id, amount: charge.amount, currency: charge.currency, description: DESCRIPTION }),
        statusCode: 201,
        // The stored answer carries the charge's receipt link, on the address the service's links are on (the local stack sets it).
        body: serialize(chargeView(charge, process.env.PUBLIC_BASE_URL?.replace(/\/+$/, '') ?? '')),
      },
    };
    const [write, ...more] = await capturedWrites(() =>
      commitCharge({
        charge,
        decision,
        agentKeyHash: hashOf(agent.key),
        userKeyHash: hashOf(user.key),
        payer: state,
        idem,
        events: chargeEvents(charge, { now }),
        now,
      }),
    );
    if (!write || more.length > 0 || write.command !== 'TransactWriteItems') {
      throw new Error(`a charge's commit sent ${[write, ...more].map((x) => x?.command).join(', ')}, not one TransactWriteItems`);
    }
    return { write, state };
  };

  const charge = async (agent: Party, user: Party): Promise<void> => {
    const now = new Date();
    const { write, state } = await build(agent, user, now);
    try {
      await raw.send(new TransactWriteCommand(write.input as unknown as TransactWriteCommandInput));
    } catch (error) {
      // A new day or month since the state was read: read it again for the next one.
      states.delete(user.id);
      throw error;
    }
    if (state.day !== periodsOf(now).day || state.month !== periodsOf(now).month) states.set(user.id, { ...state, ...periodsOf(now) });
  };

  return {
    charge,
    transactionOf: async (agent, user) => (await build(agent, user, new Date())).write,
    close: () => raw.destroy(),
  };
}
