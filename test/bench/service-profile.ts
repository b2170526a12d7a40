/**
 * Where the service's CPU per charge goes, beside the raw baseline's (docs/service-overhead.md).
 * Wall-clock ratios swing on a shared machine; CPU time per charge and a sampled profile's shares
 * hold up. One local stack as the bench starts it, the bench's agents and payers, both paths
 * warmed, then `count` charges each way one at a time (and at `--concurrency`), with this process's
 * CPU time and a V8 CPU profile (node:inspector) taken around each phase alone.
 *
 *   npx tsx test/bench/service-profile.ts [--count 2000] [--concurrency 1] [--out /tmp/service-profile]
 *                                         [--log-level SILENT|INFO] [--top 40]
 *
 * Prints CPU ms per charge for both sides, then the profile of each: self time by package or
 * source folder, the top functions by self time, and the inclusive time of the service-side steps
 * raw does not have. Writes the .cpuprofile files (open them in Chrome DevTools) to `--out`.
 */

import { createHook } from 'node:async_hooks';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { findSourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../bin/local/dynamodb-local';
import { startLocalStack } from '../../bin/local/stack';
import { type BenchContext, enabledAgent, fundedUser, inBatches, type Party } from './context';
import { closedLoop, httpClient } from './http';
import { rawCharges } from './throughput';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
  hitCount?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

const countArg = Number(arg('count', '2000'));
const sampleMicros = Number(arg('sample-us', '250'));
const concurrency = Number(arg('concurrency', '1'));
const outDir = arg('out', join(tmpdir(), 'service-profile'));
const logLevel = arg('log-level', 'SILENT');
const top = Number(arg('top', '40'));

/** A frame's package, or its project file; undefined for node's own code and V8's natives. */
function placeOf(url: string): string | undefined {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  if (!url.startsWith('file://')) return undefined;
  return url.replace(/^file:\/\//, '').replace(`${PROJECT_ROOT}/`, '');
}

/** The local stack's background loops: they serve both sides alike (the outbox of every charge). */
const BACKGROUND = /stream-poller|webhook-pipeline|webhooks\/dispatcher|payout-pipeline|kill-switch|reconciler|local-aws-sqs/;

function shortUrl(url: string): string {
  return url
    .replace(/^file:\/\//, '')
    .replace(`${PROJECT_ROOT}/`, '')
    .replace(/^.*node_modules\//, '~/');
}

/** A frame's place in the TypeScript source (tsx's source maps), else in the file run. */
function sourceOf(frame: ProfileNode['callFrame']): string {
  if (frame.url.startsWith('file://') && !frame.url.includes('node_modules')) {
    const entry = findSourceMap(frame.url.replace(/^file:\/\//, ''))?.findEntry(frame.lineNumber, frame.columnNumber);
    if (entry && 'originalLine' in entry) return `${shortUrl(frame.url)}:${entry.originalLine + 1}`;
  }
  return `${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
}

interface Summary {
  totalMs: number;
  byPlace: Map<string, number>;
  bySelf: Map<string, number>;
  inclusive: Map<string, number>;
  /** Folded stacks (root first, `;`-joined) to their ms, for flame graphs and ad-hoc questions. */
  stacks: Map<string, number>;
}

/** Self time per place and per function, and inclusive time per function (each sample counted once per function). */
function summarize(profile: CpuProfile): Summary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = (n: ProfileNode) => `${n.callFrame.functionName || '(anonymous)'} ${sourceOf(n.callFrame)}`;
  const byPlace = new Map<string, number>();
  const bySelf = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const stacks = new Map<string, number>();
  const keys = new Map<number, string>();
  const cachedKey = (n: ProfileNode) => {
    let k = keys.get(n.id);
    if (k === undefined) {
      k = keyOf(n);
      keys.set(n.id, k);
    }
    return k;
  };
  let totalMs = 0;
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0) / 1000;
    const node = byId.get(id);
    if (!node) return;
    if (node.callFrame.functionName === '(idle)') return;
    totalMs += ms;
    add(bySelf, cachedKey(node), ms);
    const seen = new Set<string>();
    const path: string[] = [];
    for (let cur: ProfileNode | undefined = node; cur; cur = byId.get(parent.get(cur.id) ?? -1)) {
      const k = cachedKey(cur);
      path.push(k);
      if (seen.has(k)) continue;
      seen.add(k);
      add(inclusive, k, ms);
    }
    // A sample counts toward the innermost frame of a package or project file on its stack, so
    // node's own work (sockets, streams, async hooks) counts toward the code that asked for it.
    let place: string | undefined;
    if (node.callFrame.functionName === '(garbage collector)') place = '(garbage collector)';
    else if (path.some((k) => BACKGROUND.test(k))) place = '(background: webhook, kill-switch and payout pollers)';
    else {
      for (let cur: ProfileNode | undefined = node; cur && !place; cur = byId.get(parent.get(cur.id) ?? -1)) {
        place = placeOf(cur.callFrame.url);
      }
      place ??= '(node, no package or project frame on the stack)';
    }
    add(byPlace, place, ms);
    add(stacks, path.reverse().join(';'), ms);
  });
  return { totalMs, byPlace, bySelf, inclusive, stacks };
}

function table(title: string, rows: [string, number][], per: number, limit: number, totalMs: number): void {
  console.log(`\n${title}`);
  for (const [k, ms] of rows.slice(0, limit)) {
    console.log(`  ${((ms / per) * 1000).toFixed(0).padStart(6)} ms/1000  ${((100 * ms) / totalMs).toFixed(1).padStart(5)}%  ${k}`);
  }
}

function merge(all: Summary[]): Summary {
  const out: Summary = { totalMs: 0, byPlace: new Map(), bySelf: new Map(), inclusive: new Map(), stacks: new Map() };
  for (const s of all) {
    out.totalMs += s.totalMs;
    for (const key of ['byPlace', 'bySelf', 'inclusive', 'stacks'] as const) {
      for (const [k, v] of s[key]) out[key].set(k, (out[key].get(k) ?? 0) + v);
    }
  }
  return out;
}

const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);

async function main(): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  const stack = await startLocalStack({
    port: 0,
    inMemory: true,
    tableName: 'profile',
    env: { LOG_LEVEL: logLevel },
    payouts: { reconcileIntervalMs: 1_000 },
    topupWatchIntervalMs: 0,
  });
  const { call, close } = httpClient(stack.url);
  const ctx: BenchContext = { stack, call, admin: { 'x-admin-key': stack.adminKey }, quick: true, log: () => {} };
  const session = new Session();
  session.connect();
  try {
    const agents: Party[] = [];
    for (let i = 0; i < 4; i++) agents.push(await enabledAgent(ctx));
    const users = await inBatches(Math.max(concurrency, 4), 8, () => fundedUser(ctx, { USD: '1000000' }));
    let keySeq = 0;
    const service = async (w: number): Promise<string> => {
      const res = await call(
        'POST',
        '/api/v1/agents/charges',
        {
          'x-agent-key': (agents[w % agents.length] as Party).key,
          'x-user-key': (users[w % users.length] as Party).key,
          'idempotency-key': `prof-${++keySeq}`,
        },
        '{"amount":0.01,"currency":"USD","description":"bench charge"}',
      );
      if (res.status !== 201) throw new Error(`${res.status} ${res.body}`);
      return '201';
    };
    const raw = rawCharges(stack.dynamoEndpoint);
    const rawCharge = async (w: number): Promise<string> => {
      await raw.charge(agents[w % agents.length] as Party, users[w % users.length] as Party);
      return '201';
    };
    // Each worker runs `count / concurrency` charges.
    const fixed = (op: (w: number) => Promise<string>, n: number) => async () => {
      let done = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async (_, w) => {
          while (done < n) {
            done++;
            await op(w);
          }
        }),
      );
    };
    await closedLoop(concurrency, 8_000, service);
    await closedLoop(concurrency, 8_000, rawCharge);

    // CPU per charge without the profiler, then the profiles: alternating rounds each, so drift on
    // a shared machine (and the webhook pipeline's backlog) hits both sides alike.
    const rounds = 4;
    const per = Math.ceil(countArg / rounds);
    const cpuMs = { raw: 0, service: 0 };
    const wallMs = { raw: 0, service: 0 };
    const ops = { raw: rawCharge, service };
    const order = (round: number): ('raw' | 'service')[] => (round % 2 === 0 ? ['raw', 'service'] : ['service', 'raw']);
    for (let round = 0; round < rounds; round++) {
      for (const kind of order(round)) {
        const cpu0 = process.cpuUsage();
        const t0 = performance.now();
        await fixed(ops[kind], per)();
        wallMs[kind] += performance.now() - t0;
        const cpu = process.cpuUsage(cpu0);
        cpuMs[kind] += (cpu.user + cpu.system) / 1000;
      }
    }
    // Async resources created per charge (promises above all): each costs the async hooks that
    // AsyncLocalStorage installs (the local stack's function scope, Powertools), beside its own cost.
    const created = { raw: new Map<string, number>(), service: new Map<string, number>() };
    let counting: Map<string, number> | undefined;
    const hook = createHook({
      init: (_id, type) => {
        if (counting) counting.set(type, (counting.get(type) ?? 0) + 1);
      },
    }).enable();
    for (const kind of ['raw', 'service'] as const) {
      counting = created[kind];
      await fixed(ops[kind], per)();
      counting = undefined;
    }
    hook.disable();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: sampleMicros });
    const profiles: Record<'raw' | 'service', CpuProfile[]> = { raw: [], service: [] };
    for (let round = 0; round < rounds; round++) {
      for (const kind of order(round)) {
        await session.post('Profiler.start');
        await fixed(ops[kind], per)();
        const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile };
        writeFileSync(join(outDir, `${kind}-${round + 1}.cpuprofile`), JSON.stringify(profile));
        profiles[kind].push(profile);
      }
    }
    const total = per * rounds;
    const results = {
      raw: { cpuMs: cpuMs.raw, wallMs: wallMs.raw, summary: merge(profiles.raw.map(summarize)) },
      service: { cpuMs: cpuMs.service, wallMs: wallMs.service, summary: merge(profiles.service.map(summarize)) },
    };
    raw.close();

    const count = total;
    for (const [kind, r] of Object.entries(results)) {
      const lines = [...r.summary.stacks].map(([k, ms]) => `${k} ${Math.round(ms * 1000)}`);
      writeFileSync(join(outDir, `${kind}.folded`), `${lines.join('\n')}\n`);
    }
    console.log(
      `charges per side ${count} (twice: CPU, then profiled every ${sampleMicros} µs), concurrency ${concurrency}, LOG_LEVEL ${logLevel}`,
    );
    for (const [kind, r] of Object.entries(results)) {
      console.log(
        `${kind.padEnd(8)} process CPU ${((r.cpuMs / count) * 1000).toFixed(0)} ms/1000 charges (unprofiled), profiled non-idle samples ${((r.summary.totalMs / count) * 1000).toFixed(0)} ms/1000, wall ${(r.wallMs / count).toFixed(2)} ms/charge`,
      );
    }
    for (const kind of ['raw', 'service'] as const) {
      const types = [...created[kind]].sort((a, b) => b[1] - a[1]);
      console.log(`${kind.padEnd(8)} async resources per charge: ${types.map(([t, n]) => `${t} ${(n / per).toFixed(1)}`).join(', ')}`);
    }
    const s = results.service?.summary as Summary;
    const r = results.raw?.summary as Summary;
    const places = new Set([...s.byPlace.keys(), ...r.byPlace.keys()]);
    const delta = [...places]
      .map((p): [string, number, number] => [p, s.byPlace.get(p) ?? 0, r.byPlace.get(p) ?? 0])
      .sort((a, b) => b[1] - b[2] - (a[1] - a[2]));
    console.log('\nCPU by place (innermost package or project file on the stack), ms per 1000 charges: service, raw, service - raw');
    for (const [p, sv, rv] of delta) {
      if (Math.abs(sv - rv) / count < 0.002) continue;
      console.log(
        `  ${((sv / count) * 1000).toFixed(0).padStart(6)} ${((rv / count) * 1000).toFixed(0).padStart(6)} ${(((sv - rv) / count) * 1000).toFixed(0).padStart(6)}  ${p}`,
      );
    }
    const onlyService = delta.filter(([, , rv]) => rv === 0).reduce((a, [, sv]) => a + sv, 0);
    console.log(
      `  ${((s.totalMs / count) * 1000).toFixed(0).padStart(6)} ${((r.totalMs / count) * 1000).toFixed(0).padStart(6)} ${(((s.totalMs - r.totalMs) / count) * 1000).toFixed(0).padStart(6)}  all (of which in places raw never reaches: ${((onlyService / count) * 1000).toFixed(0)})`,
    );
    table('service: top self time', sorted(s.bySelf), count, top, s.totalMs);
    table('raw: top self time', sorted(r.bySelf), count, 15, r.totalMs);
    console.log('\ninclusive time, ms per 1000 charges: service, raw (own code, middy, Powertools, zod, lossless-json)');
    const own = /^[^ ]+ (functions|bin|test)\/|~\/(@middy|@aws-lambda-powertools|zod|lossless-json)\//;
    for (const [k, ms] of sorted(s.inclusive)
      .filter(([k]) => own.test(k))
      .slice(0, top)) {
      console.log(
        `  ${((ms / count) * 1000).toFixed(0).padStart(6)} ${(((r.inclusive.get(k) ?? 0) / count) * 1000).toFixed(0).padStart(6)}  ${k}`,
      );
    }
  } finally {
    session.disconnect();
    close();
    await stack.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
