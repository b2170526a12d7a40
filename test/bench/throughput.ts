/**
 * Charge throughput through the whole local HTTP stack versus the floor underneath it: raw
 * TransactWriteItems of exactly the same four items (user debit, shard credit, charge put,
 * idempotency put) sent straight to the same DynamoDB Local with a client of its own, at the
 * same concurrency, in alternating rounds of the same run. The ratio of the two is the figure
 * that survives a noisy shared machine; absolute ops/s do not.
 *
 * The raw charges are real charges (same users, same agents, same item layout), so the ledger
 * audit at the end of the run covers them too.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { newChargeId } from '../../functions/core/ids';
import { keys, TTL_ATTRIBUTE } from '../../functions/store/table';
import { type BenchContext, enabledAgent, fundedUser, inBatches, type Party } from './context';
import { closedLoop, type LoadResult, percentile } from './http';
import { cpuMsOf, javaChildren } from './proc';

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

export async function chargeThroughput(
  ctx: BenchContext,
  opts: { concurrency: number; roundSeconds: number; rounds: number; warmupSeconds: number },
): Promise<ThroughputResult> {
  const agents: Party[] = [];
  for (let i = 0; i < 4; i++) agents.push(await enabledAgent(ctx));
  const users = await inBatches(opts.concurrency, 8, () => fundedUser(ctx, { USD: '1000000' }));

  const raw = DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: 'us-east-1',
      endpoint: ctx.stack.dynamoEndpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 4,
      requestHandler: { httpAgent: { keepAlive: true }, requestTimeout: 5_000 },
    }),
    { marshallOptions: { removeUndefinedValues: true } },
  );

  let keySeq = 0;
  const service = async (w: number): Promise<string> => {
    const agent = agents[w % agents.length] as Party;
    const user = users[w % users.length] as Party;
    const res = await ctx.call(
      'POST',
      '/api/v1/agents/charges',
      { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `tp-${++keySeq}` },
      `{"amount":${AMOUNT_TEXT},"currency":"USD","description":"bench charge"}`,
    );
    return String(res.status);
  };

  const rawCharge = async (w: number): Promise<string> => {
    const agent = agents[w % agents.length] as Party;
    const user = users[w % users.length] as Party;
    const table = ctx.stack.tableName;
    const now = new Date();
    const nowSeconds = Math.floor(now.getTime() / 1000);
    const id = newChargeId();
    const idemKey = `raw-${++keySeq}`;
    const charge = {
      id,
      agentId: agent.id,
      userId: user.id,
      idempotencyKey: idemKey,
      amount: AMOUNT_MINOR,
      currency: 'USD',
      description: 'bench charge',
      status: 'SUCCESS',
      createdAt: now.toISOString(),
    };
    const body = JSON.stringify({ ...charge, amount: 0.01, agentId: undefined, userId: undefined });
    await raw.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: table,
              Key: keys.user(user.id),
              UpdateExpression: 'ADD #cur :neg',
              ConditionExpression: 'attribute_exists(PK) AND #cur >= :amount',
              ExpressionAttributeNames: { '#cur': 'USD' },
              ExpressionAttributeValues: { ':neg': -AMOUNT_MINOR, ':amount': AMOUNT_MINOR },
            },
          },
          {
            Update: {
              TableName: table,
              Key: keys.agentBalanceShard(agent.id, Math.floor(Math.random() * config().BALANCE_SHARDS)),
              UpdateExpression:
                'ADD #cur :amount, charges :one SET agentId = if_not_exists(agentId, :agentId), #type = if_not_exists(#type, :type)',
              ExpressionAttributeNames: { '#cur': 'USD', '#type': 'type' },
              ExpressionAttributeValues: { ':amount': AMOUNT_MINOR, ':one': 1, ':agentId': agent.id, ':type': 'AgentBalanceShard' },
            },
          },
          {
            Put: {
              TableName: table,
              Item: { ...keys.charge(agent.id, id), ...keys.chargeIndex(id), type: 'Charge', ...charge },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          {
            Put: {
              TableName: table,
              Item: {
                ...keys.idempotency(`${agent.id}#charges`, idemKey),
                type: 'Idempotency',
                fingerprint: 'f'.repeat(64),
                statusCode: 201,
                body,
                createdAt: now.toISOString(),
                [TTL_ATTRIBUTE]: nowSeconds + 86_400,
              },
              ConditionExpression: 'attribute_not_exists(PK) OR #ttl < :now',
              ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
              ExpressionAttributeValues: { ':now': nowSeconds },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
        ],
      }),
    );
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
  raw.destroy();

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
