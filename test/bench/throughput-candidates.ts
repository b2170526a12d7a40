/**
 * Where did local throughput go in part two? Measures, one at a time, each candidate that could
 * slow DynamoDB Local down under the charge transaction, against the same baseline repeated
 * between candidates (the machine is shared: compare ratios within one run, not ops/s across runs).
 *
 *   npx tsx test/bench/throughput-candidates.ts [--seconds 10] [--concurrency 8] [--only inMemory,dbPath,...]
 *
 * The load is raw TransactWriteItems shaped like the charge transaction as commitCharge sent it on
 * 2026-11-24 (captured with test/bench/throughput.ts `rawCharges`): user debit, shard credit, charge
 * put with its GSI1 and GSI2 keys, idempotency record, the agent's kill-switch ConditionCheck and the
 * outbox item (24 write units), or part one's four items. A fixed template on purpose: this script
 * measures DynamoDB Local's side, which must not move while the service's layout does.
 *
 * Candidates: the table stream on or off, GSI2 there or not, the webhook pipeline's stream poller
 * running (100 ms or 1 s, with or without the dispatcher's per-owner Query), DynamoDB Local in
 * memory or on disk (`npm start` keeps .data/), and JVM flags.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  QueryCommand,
  type TransactWriteItem,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { marshall } from '@aws-sdk/util-dynamodb';
import { startDynamoDbLocal } from '../../bin/local/dynamodb-local';
import { closedLoop } from './http';
import { cpuMsOf, javaChildren } from './proc';

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const region = 'us-east-1';

interface Instance {
  endpoint: string;
  stop(): Promise<void>;
}

/** DynamoDB Local as `npm start` runs it (bin/local/dynamodb-local.ts), with these JVM flags; on disk in a temporary folder. */
async function startInstance(flags: string[], storage: 'memory' | 'disk'): Promise<Instance> {
  const dir = storage === 'disk' ? mkdtempSync(join(tmpdir(), 'ddb-cand-')) : undefined;
  const local = await startDynamoDbLocal({ inMemory: !dir, ...(dir ? { dataDir: dir } : {}), jvmFlags: flags });
  return {
    endpoint: local.endpoint,
    stop: async () => {
      await local.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface TableShape {
  stream: boolean;
  gsi2: boolean;
}

async function createTable(endpoint: string, name: string, shape: TableShape): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region, credentials });
  const index = (n: string) => ({
    IndexName: n,
    KeySchema: [
      { AttributeName: `${n}PK`, KeyType: 'HASH' as const },
      { AttributeName: `${n}SK`, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: 'ALL' as const },
  });
  const names = shape.gsi2 ? ['GSI1', 'GSI2'] : ['GSI1'];
  await client.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'PK', AttributeType: 'S' },
        { AttributeName: 'SK', AttributeType: 'S' },
        ...names.flatMap((n) => [
          { AttributeName: `${n}PK`, AttributeType: 'S' as const },
          { AttributeName: `${n}SK`, AttributeType: 'S' as const },
        ]),
      ],
      KeySchema: [
        { AttributeName: 'PK', KeyType: 'HASH' },
        { AttributeName: 'SK', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: names.map(index),
      ...(shape.stream ? { StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' } } : {}),
    }),
  );
  // Users with money, enabled agents.
  const seed: TransactWriteItem[] = [
    ...USERS.map((u) => ({
      Put: { TableName: name, Item: marshall({ PK: `USER#${u}`, SK: 'USER', USD: 1e12, spendDay: { p: DAY }, spendMonth: { p: MONTH } }) },
    })),
    ...AGENTS.map((a) => ({ Put: { TableName: name, Item: marshall({ PK: `AGENTKEY#${a}`, SK: 'AGENT', enabled: true, agentId: a }) } })),
  ];
  await client.send(new TransactWriteItemsCommand({ TransactItems: seed }));
  client.destroy();
}

const USERS = Array.from({ length: 8 }, (_, i) => `u01bench${i}`);
const AGENTS = Array.from({ length: 4 }, (_, i) => `a01bench${i}`);
const DAY = new Date().toISOString().slice(0, 10);
const MONTH = DAY.slice(0, 7);
let seq = 0;

const eventBody = (id: string, charge: string, extra = '') =>
  `{"id":"${id}","type":"charge.succeeded","createdAt":"2026-11-24T20:27:12.551Z","data":{"id":"${charge}","idempotencyKey":"raw-1","amount":0.01,"currency":"USD","description":"bench charge","status":"SUCCESS","createdAt":"2026-11-24T20:27:12.551Z","failureReason":null,"pendingReason":null,"expiresAt":null,"authorizedAmount":null,"refundedAmount":0${extra}}}`;

/** The charge transaction: `full` = part two's six items, `partOne` = the four items before. */
function chargeItems(table: string, w: number, kind: 'full' | 'partOne'): TransactWriteItem[] {
  const n = ++seq;
  const user = USERS[w % USERS.length] as string;
  const agent = AGENTS[w % AGENTS.length] as string;
  const charge = `c01bench${process.pid}x${n}`;
  const idem = `k${n}`;
  const now = new Date().toISOString();
  const ttl = Math.floor(Date.now() / 1000) + 86_400;
  const m = (x: Record<string, unknown>) => marshall(x, { removeUndefinedValues: true });
  const items: TransactWriteItem[] = [
    {
      Update: {
        TableName: table,
        Key: m({ PK: `USER#${user}`, SK: 'USER' }),
        UpdateExpression: 'ADD #cur :neg, #d.#cur :amount, #m.#cur :amount',
        ConditionExpression: 'attribute_exists(PK) AND #cur >= :amount AND #d.p = :day AND #m.p = :month',
        ExpressionAttributeNames: { '#cur': 'USD', '#d': 'spendDay', '#m': 'spendMonth' },
        ExpressionAttributeValues: m({ ':amount': 1, ':neg': -1, ':day': DAY, ':month': MONTH }),
      },
    },
    {
      Update: {
        TableName: table,
        Key: m({ PK: `AGENTBAL#${agent}#${n % 8}`, SK: 'BAL' }),
        UpdateExpression: 'ADD #cur :amount, charges :one SET agentId = if_not_exists(agentId, :agentId)',
        ExpressionAttributeNames: { '#cur': 'USD' },
        ExpressionAttributeValues: m({ ':amount': 1, ':one': 1, ':agentId': agent }),
      },
    },
    {
      Put: {
        TableName: table,
        Item: m({
          PK: `CHARGES#${agent}`,
          SK: charge,
          GSI1PK: `CHARGE#${charge}`,
          GSI1SK: 'CHARGE',
          ...(kind === 'full' ? { GSI2PK: `USERCHARGES#${user}`, GSI2SK: charge, counted: { day: DAY, month: MONTH, agent: false } } : {}),
          type: 'Charge',
          id: charge,
          agentId: agent,
          userId: user,
          idempotencyKey: idem,
          amount: 1,
          currency: 'USD',
          description: 'bench charge',
          status: 'SUCCESS',
          createdAt: now,
          agentName: 'bench-agent-1',
        }),
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    {
      Put: {
        TableName: table,
        Item: m({
          PK: `IDEM#${agent}#charges#${idem}`,
          SK: 'IDEM',
          type: 'Idempotency',
          fingerprint: 'f'.repeat(64),
          statusCode: 201,
          body: eventBody(charge, charge),
          createdAt: now,
          ttl,
        }),
        ConditionExpression: 'attribute_not_exists(PK) OR #ttl < :now',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: m({ ':now': ttl - 86_400 }),
      },
    },
  ];
  if (kind === 'full') {
    items.push(
      {
        ConditionCheck: {
          TableName: table,
          Key: m({ PK: `AGENTKEY#${agent}`, SK: 'AGENT' }),
          ConditionExpression: 'enabled = :on',
          ExpressionAttributeValues: m({ ':on': true }),
        },
      },
      {
        Put: {
          TableName: table,
          Item: m({
            PK: `OUTBOX#evt_${charge}`,
            SK: 'OUTBOX',
            type: 'Outbox',
            createdAt: now,
            events: [
              {
                id: `evt_${charge}a`,
                type: 'charge.succeeded',
                createdAt: now,
                owner: `agent#${agent}`,
                body: eventBody(`evt_${charge}a`, charge),
              },
              {
                id: `evt_${charge}b`,
                type: 'charge.succeeded',
                createdAt: now,
                owner: `user#${user}`,
                body: eventBody(`evt_${charge}b`, charge, `,"agent":{"id":"${agent}","name":"bench-agent-1"}`),
              },
            ],
            ttl,
          }),
        },
      },
    );
  }
  return items;
}

/**
 * The webhook pipeline's DynamoDB side (bin/local/webhook-pipeline.ts): DescribeStream every
 * second, GetRecords (Limit 1000) on every open shard every `intervalMs` (at once again after a
 * full page), and, with `dispatch`, the dispatcher's one Query per distinct owner in each page.
 */
function startPoller(
  endpoint: string,
  table: string,
  intervalMs: number,
  dispatch: boolean,
): { stop(): Promise<void>; calls: () => number } {
  const streams = new DynamoDBStreamsClient({ endpoint, region, credentials });
  const dynamo = new DynamoDBClient({ endpoint, region, credentials });
  let stopping = false;
  let calls = 0;
  const loop = (async () => {
    const described = await dynamo.send(new DescribeTableCommand({ TableName: table }));
    const arn = described.Table?.LatestStreamArn as string;
    const iterators = new Map<string, string | undefined>();
    let sinceDiscovery = Number.POSITIVE_INFINITY;
    while (!stopping) {
      let full = false;
      if (sinceDiscovery >= 1000) {
        const d = await streams.send(new DescribeStreamCommand({ StreamArn: arn }));
        calls++;
        for (const s of d.StreamDescription?.Shards ?? []) {
          if (!s.ShardId || iterators.has(s.ShardId)) continue;
          const it = await streams.send(new GetShardIteratorCommand({ StreamArn: arn, ShardId: s.ShardId, ShardIteratorType: 'LATEST' }));
          calls++;
          iterators.set(s.ShardId, it.ShardIterator);
        }
        sinceDiscovery = 0;
      }
      await Promise.all(
        [...iterators].map(async ([id, it]) => {
          if (!it) return;
          const out = await streams.send(new GetRecordsCommand({ ShardIterator: it, Limit: 1000 }));
          calls++;
          iterators.set(id, out.NextShardIterator);
          const records = out.Records ?? [];
          if (records.length >= 1000) full = true;
          if (dispatch) {
            const owners = new Set<string>();
            for (const r of records) for (const e of r.dynamodb?.NewImage?.events?.L ?? []) owners.add(e.M?.owner?.S ?? '');
            await Promise.all(
              [...owners].map((o) =>
                // A Query on the owner's webhook partition, as listWebhooks does.
                dynamo.send(
                  new QueryCommand({
                    TableName: table,
                    KeyConditionExpression: 'PK = :pk',
                    ExpressionAttributeValues: { ':pk': { S: `WEBHOOKS#${o}` } },
                    ConsistentRead: true,
                  }),
                ),
              ),
            );
            calls += owners.size;
          }
        }),
      );
      const wait = full ? 0 : intervalMs;
      sinceDiscovery += Math.max(wait, 10);
      if (wait) await new Promise((r) => setTimeout(r, wait));
    }
  })();
  return {
    calls: () => calls,
    stop: async () => {
      stopping = true;
      await loop.catch(() => undefined);
      streams.destroy();
      dynamo.destroy();
    },
  };
}

interface Candidate {
  name: string;
  table: TableShape;
  kind: 'full' | 'partOne';
  poller?: { intervalMs: number; dispatch: boolean };
}

const BASELINE: Candidate = { name: 'baseline: stream, GSI1+GSI2, 6 items, no poller', table: { stream: true, gsi2: true }, kind: 'full' };

interface Figures {
  opsPerSecond: number;
  /** DynamoDB Local's CPU per transaction: steadier than ops/s on a shared machine. */
  javaMsPerOp: number;
}

const fig = (f: Figures) => `${f.opsPerSecond.toFixed(1)} ops/s ${f.javaMsPerOp.toFixed(2)} ms CPU/op`;

/** One table per table shape, created before anything is measured, so every run sees the same instance. */
const tables = new Map<string, string>();
const tableKey = (t: TableShape) => `${t.stream ? 'stream' : 'nostream'}-${t.gsi2 ? 'gsi2' : 'nogsi2'}`;

async function tablesFor(endpoint: string, candidates: readonly Candidate[]): Promise<void> {
  tables.clear();
  for (const c of [BASELINE, ...candidates]) {
    const key = tableKey(c.table);
    if (tables.has(key)) continue;
    const name = `cand${++seq}`;
    await createTable(endpoint, name, c.table);
    tables.set(key, name);
  }
}

async function measure(endpoint: string, c: Candidate, seconds: number, concurrency: number): Promise<Figures> {
  const table = tables.get(tableKey(c.table)) as string;
  const client = new DynamoDBClient({ endpoint, region, credentials, requestHandler: { httpAgent: { keepAlive: true } } });
  const poller = c.poller ? startPoller(endpoint, table, c.poller.intervalMs, c.poller.dispatch) : undefined;
  const op = async (w: number) => {
    await client.send(new TransactWriteItemsCommand({ TransactItems: chargeItems(table, w, c.kind) }));
    return 'ok';
  };
  await closedLoop(concurrency, 2000, op);
  const java = javaChildren();
  const cpu0 = cpuMsOf(java) ?? 0;
  const r = await closedLoop(concurrency, seconds * 1000, op);
  const javaMsPerOp = ((cpuMsOf(java) ?? 0) - cpu0) / Math.max(1, r.ops);
  await poller?.stop();
  client.destroy();
  if ((r.outcomes.ok ?? 0) !== r.ops) throw new Error(`${c.name}: ${JSON.stringify(r.outcomes)}`);
  return { opsPerSecond: r.opsPerSecond, javaMsPerOp };
}

const TABLE_CANDIDATES: Candidate[] = [
  { name: 'no stream', table: { stream: false, gsi2: true }, kind: 'full' },
  { name: 'no GSI2 (stream on)', table: { stream: true, gsi2: false }, kind: 'full' },
  { name: 'part one: no stream, no GSI2, 4 items', table: { stream: false, gsi2: false }, kind: 'partOne' },
  {
    name: 'stream poller every 100 ms + dispatcher Query per owner',
    table: BASELINE.table,
    kind: 'full',
    poller: { intervalMs: 100, dispatch: true },
  },
  {
    name: 'stream poller every 1 s + dispatcher Query per owner',
    table: BASELINE.table,
    kind: 'full',
    poller: { intervalMs: 1000, dispatch: true },
  },
];

const INSTANCES: Record<string, { flags: string[]; storage: 'memory' | 'disk'; candidates: Candidate[] }> = {
  inMemory: { flags: ['-Xms64m'], storage: 'memory', candidates: TABLE_CANDIDATES },
  dbPath: { flags: ['-Xms64m'], storage: 'disk', candidates: TABLE_CANDIDATES.slice(0, 1) },
  bigHeap: { flags: ['-Xms512m', '-Xmx1g'], storage: 'memory', candidates: [] },
  parallelGc: { flags: ['-Xms64m', '-XX:+UseParallelGC'], storage: 'memory', candidates: [] },
};

/**
 * Throughput over time on one table, stream on and off, windows of `seconds`: does each write get
 * slower as the stream's records pile up?
 */
async function decay(seconds: number, concurrency: number, storage: 'memory' | 'disk'): Promise<void> {
  for (const stream of [false, true]) {
    const instance = await startInstance(['-Xms64m'], storage);
    try {
      const table = `decay${++seq}`;
      await createTable(instance.endpoint, table, { stream, gsi2: true });
      const client = new DynamoDBClient({ endpoint: instance.endpoint, region, credentials });
      let total = 0;
      const windows: string[] = [];
      const java = javaChildren();
      for (let i = 0; i < 8; i++) {
        const cpu0 = cpuMsOf(java) ?? 0;
        const r = await closedLoop(concurrency, seconds * 1000, async (w) => {
          await client.send(new TransactWriteItemsCommand({ TransactItems: chargeItems(table, w, 'full') }));
          return 'ok';
        });
        total += r.ops;
        windows.push(
          `${r.opsPerSecond.toFixed(0)} ops/s ${(((cpuMsOf(java) ?? 0) - cpu0) / Math.max(1, r.ops)).toFixed(2)} ms/op (${total})`,
        );
      }
      client.destroy();
      console.log(
        `[decay ${storage}] stream ${stream ? 'on ' : 'off'}: per ${seconds} s window (transactions so far): ${windows.join(', ')}`,
      );
    } finally {
      await instance.stop();
    }
  }
}

interface StackVariant {
  name: string;
  pollIntervalMs: number;
  sweepIntervalMs: number;
  topupWatchIntervalMs: number;
}

/** `npm start`'s in-process loops: the webhook stream poller (100 ms), the sweeper and the top-up watcher (2 s). */
const STACK_VARIANTS: StackVariant[] = [
  { name: 'as npm start (poller 100 ms, sweeper and watcher 2 s)', pollIntervalMs: 100, sweepIntervalMs: 2000, topupWatchIntervalMs: 2000 },
  { name: 'stream poller every 1 s', pollIntervalMs: 1000, sweepIntervalMs: 2000, topupWatchIntervalMs: 2000 },
  { name: 'stream poller idle during the run (15 s)', pollIntervalMs: 15_000, sweepIntervalMs: 2000, topupWatchIntervalMs: 2000 },
  { name: 'sweeper and watcher off', pollIntervalMs: 100, sweepIntervalMs: 0, topupWatchIntervalMs: 0 },
];

/**
 * The same comparison through the real local stack (test/bench/throughput.ts's service and raw
 * charges, the stack's in-process loops running beside them), one stack per variant on one warm
 * DynamoDB Local: what the loops of `npm start` cost the charges.
 */
async function stackMode(seconds: number, concurrency: number, warmupSeconds: number, pick?: number[]): Promise<void> {
  const instance = await startInstance(['-Xms64m'], 'memory');
  const { startLocalStack } = await import('../../bin/local/stack');
  const { httpClient } = await import('./http');
  const { enabledAgent, fundedUser, inBatches } = await import('./context');
  try {
    let first = true;
    const variants = pick ? pick.map((i) => STACK_VARIANTS[i] as StackVariant) : [...STACK_VARIANTS, STACK_VARIANTS[0] as StackVariant];
    for (const v of variants) {
      const stack = await startLocalStack({
        port: 0,
        inMemory: true,
        dynamoEndpoint: instance.endpoint,
        tableName: `stack${++seq}`,
        env: { LOG_LEVEL: 'SILENT' },
        webhooks: { pollIntervalMs: v.pollIntervalMs },
        sweepIntervalMs: v.sweepIntervalMs,
        topupWatchIntervalMs: v.topupWatchIntervalMs,
      });
      const http = httpClient(stack.url);
      const ctx = { stack, call: http.call, admin: { 'x-admin-key': stack.adminKey }, quick: true, log: () => undefined };
      const agents = await inBatches(4, 4, () => enabledAgent(ctx));
      const users = await inBatches(concurrency, 4, () => fundedUser(ctx, { USD: '1000000' }));
      let k = 0;
      const service = async (w: number) =>
        String(
          (
            await http.call(
              'POST',
              '/api/v1/agents/charges',
              {
                'x-agent-key': agents[w % 4]?.key ?? '',
                'x-user-key': users[w % users.length]?.key ?? '',
                'idempotency-key': `cand-${++k}`,
              },
              '{"amount":0.01,"currency":"USD","description":"bench charge"}',
            )
          ).status,
        );
      await closedLoop(concurrency, (first ? warmupSeconds : 3) * 1000, service);
      first = false;
      const java = javaChildren();
      const run = async (op: (w: number) => Promise<string>) => {
        const cpu0 = cpuMsOf(java) ?? 0;
        const node0 = process.cpuUsage();
        const r = await closedLoop(concurrency, seconds * 1000, op);
        const node = process.cpuUsage(node0);
        if ((r.outcomes['201'] ?? 0) !== r.ops) throw new Error(`${v.name}: ${JSON.stringify(r.outcomes)}`);
        return `${r.opsPerSecond.toFixed(1)} ops/s (DynamoDB Local ${(((cpuMsOf(java) ?? 0) - cpu0) / r.ops).toFixed(2)} ms CPU/op, Node ${((node.user + node.system) / 1000 / r.ops).toFixed(2)} ms CPU/op)`;
      };
      // What the loops cost with nothing else running: DynamoDB Local's and this process's CPU while idle.
      const idle0 = cpuMsOf(java) ?? 0;
      const idleNode0 = process.cpuUsage();
      await new Promise((r) => setTimeout(r, seconds * 1000));
      const idleNode = process.cpuUsage(idleNode0);
      const idle = `idle: DynamoDB Local ${(((cpuMsOf(java) ?? 0) - idle0) / (10 * seconds)).toFixed(1)}% of a core, Node ${((idleNode.user + idleNode.system) / 1000 / (10 * seconds)).toFixed(1)}%`;
      const serviceFig = await run(service);
      console.log(`[stack] ${v.name}: ${idle}; service charges ${serviceFig}`);
      http.close();
      await stack.stop();
    }
  } finally {
    await instance.stop();
  }
}

/**
 * Does DynamoDB Local get slower per write as stream-enabled tables (streams) pile up in the
 * instance, even idle ones? One table measured, then again after idle tables without and with
 * streams are added beside it.
 */
async function streamsMode(seconds: number, concurrency: number, warmupSeconds: number): Promise<void> {
  const instance = await startInstance(['-Xms64m'], 'memory');
  try {
    await tablesFor(instance.endpoint, []);
    const warm = await measure(instance.endpoint, BASELINE, warmupSeconds, concurrency);
    console.log(`[streams] JVM warm-up, ${warmupSeconds} s: ${fig(warm)}`);
    console.log(`[streams] one table: ${fig(await measure(instance.endpoint, BASELINE, seconds, concurrency))}`);
    for (const [count, stream] of [
      [10, false],
      [10, true],
      [20, true],
    ] as const) {
      for (let i = 0; i < count; i++) await createTable(instance.endpoint, `idle${++seq}`, { stream, gsi2: true });
      console.log(
        `[streams] after ${count} more idle tables ${stream ? 'with' : 'without'} a stream: ${fig(await measure(instance.endpoint, BASELINE, seconds, concurrency))}`,
      );
    }
  } finally {
    await instance.stop();
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const opt = (name: string, dflt: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? (argv[i + 1] ?? dflt) : dflt;
  };
  const seconds = Number(opt('seconds', '10'));
  const concurrency = Number(opt('concurrency', '8'));
  const warmupSeconds = Number(opt('warmup', '30'));
  const only = opt('only', Object.keys(INSTANCES).join(',')).split(',');
  if (argv.includes('--streams')) return streamsMode(seconds, concurrency, warmupSeconds);
  if (argv.includes('--stack')) {
    const pick = argv.includes('--variants') ? opt('variants', '0').split(',').map(Number) : undefined;
    return stackMode(seconds, concurrency, warmupSeconds, pick);
  }
  if (argv.includes('--decay')) return decay(seconds, concurrency, argv.includes('--disk') ? 'disk' : 'memory');
  console.log(`each run ${seconds} s at concurrency ${concurrency}, after 2 s of warm-up; ratios are to the baseline runs beside them`);
  for (const name of only) {
    const spec = INSTANCES[name];
    if (!spec) throw new Error(`no instance ${name}`);
    const instance = await startInstance(spec.flags, spec.storage);
    try {
      await tablesFor(instance.endpoint, spec.candidates);
      // The JVM compiles DynamoDB Local's hot paths over the first half-minute or so of load.
      const warm = await measure(instance.endpoint, BASELINE, warmupSeconds, concurrency);
      console.log(`[${name}] JVM warm-up, ${warmupSeconds} s: ${fig(warm)}`);
      let before = await measure(instance.endpoint, BASELINE, seconds, concurrency);
      console.log(`[${name}: ${spec.storage}, ${spec.flags.join(' ')}] ${BASELINE.name}: ${fig(before)}`);
      for (const c of spec.candidates) {
        const x = await measure(instance.endpoint, c, seconds, concurrency);
        const after = await measure(instance.endpoint, BASELINE, seconds, concurrency);
        const base = (before.opsPerSecond + after.opsPerSecond) / 2;
        const baseCpu = (before.javaMsPerOp + after.javaMsPerOp) / 2;
        console.log(
          `[${name}] ${c.name}: ${fig(x)}: ops/s ×${(x.opsPerSecond / base).toFixed(2)}, CPU/op ×${(x.javaMsPerOp / baseCpu).toFixed(2)} of the baseline (${fig(before)} before, ${fig(after)} after)`,
        );
        before = after;
      }
    } finally {
      await instance.stop();
    }
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
